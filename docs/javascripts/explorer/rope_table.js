// The model-type table of posenc/configs/model_types.json, as posenc/configs/_table.py reads it: the
// entry of a model type (a wrapper read as its text model), the keys its config class renames or
// defaults, and the layer patterns it fills in or forces. Part of the port in rope_params.js.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, get, has } = P;

  const ATTENTION_LAYER_TYPES = ["full_attention", "sliding_attention", "chunked_attention", "indexed_attention"];
  const NOT_ATTENTION_LAYER_TYPES = ["linear_attention", "mamba", "conv", "mlp", "moe"];

  // ---- the table (posenc/configs/_table.py) ------------------------------------------------------
  let modelTypesCache = null;
  function modelTypes() {
    if (modelTypesCache === null) {
      const data = global.posencRopeData;
      if (!data) throw new Error("posenc explorer: the model-type table (assets/posenc/rope-data.js) is not loaded");
      modelTypesCache = global.posencJSON.parseJSON(data.table).model_types;
    }
    return modelTypesCache;
  }

  function lookup(modelType) {
    if (P.isList(modelType) || P.isMapping(modelType)) throw typeError(`unhashable type: '${P.typeName(modelType)}'`);
    return typeof modelType === "string" ? get(modelTypes(), modelType) : null;
  }

  function entry(modelType) {
    let found = lookup(modelType);
    while (found !== null && P.keys(found).every((key) => WRAPPER_KEYS.includes(key))) {
      found = get(modelTypes(), found.text_model_type);
    }
    return found;
  }
  const WRAPPER_KEYS = ["text_model_type", "text_model_type_aliases"];

  /** The model type a wrapper's text model is read as: `given` (its text_config's own model_type)
   * under the name the wrapper's config class gives it, else the class default. */
  function textModelType(modelType, given = null) {
    const found = lookup(modelType) || {};
    if (given !== null) return P.str(get(get(found, "text_model_type_aliases") || {}, given) ?? given);
    return P.str(get(found, "text_model_type") ?? modelType);
  }

  function layoutOf(found, config) {
    const spec = get(found, "layout");
    if (!P.isMapping(spec)) return spec === null ? null : P.str(spec);
    const value = get(config, spec.key);
    const flag = value === null ? spec.default : value;
    if (!P.isBool(flag)) throw typeError(`config[${repr(spec.key)}] must be true or false, got ${P.typeName(flag)} ${repr(flag)}`);
    const chosen = flag ? spec.true : spec.false;
    return chosen === null ? null : P.str(chosen);
  }

  function tableGet(found, config, key) {
    let value = get(config, key);
    const names = get(found, "attribute_map") || {};
    if (value === null && has(names, key)) value = get(config, names[key]);
    return value;
  }

  function field(found, config, key) {
    const value = tableGet(found, config, key);
    return value === null ? get(get(found, "field_defaults") || {}, key) : value;
  }

  function defaultTheta(found, layerType) {
    const theta = has(found, "default_theta") ? found.default_theta : 10000.0;
    if (P.isMapping(theta)) { // by layer type (NeoMME), or {global, local}: local for sliding layers
      if (layerType !== null && has(theta, layerType)) return +theta[layerType];
      return +theta[layerType === "sliding_attention" ? "local" : "global"];
    }
    return +theta;
  }

  function everyK(pattern, config, layers) {
    const key = get(pattern, "key");
    let k = P.truthy(key) ? get(config, key) : null;
    k = k === null ? pattern.k : k;
    if (!P.isInt(k) || P.less(k, 1)) throw valueError(`config[${repr(key)}] must be an integer >= 1, got ${repr(k)}`);
    const out = [];
    const fromEnd = P.truthy(get(pattern, "from_end")); // counted from the last layer
    for (let i = 0; i < layers; i++) {
      out.push(((fromEnd ? layers - 1 - i : i) + pattern.offset) % Number(k) === 0 ? pattern.every : pattern.other);
    }
    // the class forces the last layer's kind, or makes it `every` when no other layer is
    if (out.length && (has(pattern, "last") || (P.truthy(get(pattern, "at_least_one")) && !out.includes(pattern.every)))) {
      out[out.length - 1] = has(pattern, "last") ? pattern.last : pattern.every;
    }
    return out;
  }

  /** Whether the config gives `key` a value other than the class default (True is not 1 here). */
  function differs(config, key, defaultValue) {
    if (!has(config, key)) return false;
    const value = get(config, key);
    return P.isBool(value) !== P.isBool(defaultValue) || !P.equal(value, defaultValue);
  }

  /** The layer pattern the config class fills in, or null where the config sets keys it depends on
   * in a way the table does not follow; a key of `if_null` given as null makes every layer its kind. */
  function pattern(spec, config, layers) {
    const ifNull = get(spec, "if_null") || {};
    for (const key of P.keys(ifNull)) {
      if (has(config, key) && get(config, key) === null) return new Array(layers).fill(ifNull[key]);
    }
    for (const group of get(spec, "depends_on") || []) {
      if (P.keys(group).every((key) => differs(config, key, group[key]))) return null;
    }
    return everyK(spec, config, layers);
  }

  /** A layer_types (or no_rope_layers) list the config gives, as the config class keeps it. */
  function givenList(found, modelType, field, values) {
    const rule = get(found, `given_${field}`);
    if (!P.truthy(rule) || !values.length) return values;
    if (P.truthy(get(rule, "rewritten"))) {
      throw valueError(`config[${repr(field)}] is rewritten by transformers' config class for model type ` +
        `${repr(modelType)} in a way posenc does not follow; give a config without ${repr(field)}`);
    }
    const renamed = get(rule, "renamed") || {};
    const out = values.map((v) => (typeof v === "string" && has(renamed, v) ? renamed[v] : v));
    if (has(rule, "last")) out[out.length - 1] = rule.last;
    return out;
  }

  global.posencRopeTable = Object.freeze({
    ATTENTION_LAYER_TYPES, NOT_ATTENTION_LAYER_TYPES, modelTypes, lookup, entry, textModelType, layoutOf, tableGet, field,
    defaultTheta, everyK, differs, pattern, givenList,
  });
})(typeof window !== "undefined" ? window : globalThis);
