// How transformers' config classes complete a model's RoPE parameters: a port of
// posenc/_rope_table.py and posenc/_rope_params.py (same rules, same order of checks, same messages).
// What differs between model types comes from posenc/rope_model_types.json, which the site serves
// unchanged (hooks/rope_data.py writes it into assets/posenc/rope-data.js): nothing is retyped here.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const { valueError, typeError, repr, get, has } = P;

  const MAX_LENGTH = 2 ** 53;
  const MAX_NESTING = 100; // levels of dicts and lists a config may nest
  const MAX_SIZE = 2 ** 24; // posenc._checks.MAX_SIZE: the largest size of one axis
  const ROPE_TYPES = {
    default: [],
    linear: ["factor"],
    dynamic: ["factor"],
    yarn: ["factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale",
      "mscale_all_dim", "truncate"],
    longrope: ["factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"],
    llama3: ["factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"],
    proportional: ["factor"],
  };
  const COMMON = ["rope_type", "type", "rope_theta", "partial_rotary_factor"];
  const WITH_ORIGINAL = ["yarn", "longrope", "llama3"];
  const ATTENTION_LAYER_TYPES = ["full_attention", "sliding_attention", "chunked_attention", "indexed_attention"];
  const NOT_ATTENTION_LAYER_TYPES = ["linear_attention", "mamba", "conv", "mlp", "moe"];

  // ---- the table (posenc/_rope_table.py) -----------------------------------------------------------
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
    if (P.isMapping(theta)) return +theta[layerType === "sliding_attention" ? "local" : "global"];
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

  // ---- reading the config (posenc/_rope_params.py) ----------------------------------------------
  function asMapping(config) {
    if (!P.isMapping(config)) {
      throw typeError(`config must be a dict (a model's config.json) or a transformers config, got ${P.typeName(config)}`);
    }
    if (tooDeep(config)) {
      throw valueError(`config nests more than ${MAX_NESTING} levels deep (dicts and lists; a config.json nests a few)`);
    }
    return config;
  }

  /** Whether dicts and lists nest more than MAX_NESTING levels in `value` (a loop does), without recursing. */
  function tooDeep(value) {
    const stack = [[value, 1]];
    while (stack.length) {
      const [item, depth] = stack.pop();
      const children = P.isMapping(item) ? P.keys(item).map((k) => P.get(item, k)) : P.isList(item) ? item : [];
      for (const child of children) {
        if (P.isMapping(child) || P.isList(child)) {
          if (depth + 1 > MAX_NESTING) return true;
          stack.push([child, depth + 1]);
        }
      }
    }
    return false;
  }

  /** The value of key `name` in whichever sources have it (not None); they must agree. */
  function one(name, ...sources) {
    const found = sources.filter(([, source]) => get(source, name) !== null).map(([where, source]) => [where, get(source, name)]);
    if (new Set(found.map(([, v]) => repr(v))).size > 1) {
      throw valueError(`config is inconsistent: ${found.map(([where, v]) => `${where}[${repr(name)}] = ${repr(v)}`).join(", ")}`);
    }
    return found.length ? found[0][1] : null;
  }

  function textPart(config) {
    const modelType = get(config, "model_type");
    if (modelType !== null && typeof modelType !== "string") {
      throw typeError(`config['model_type'] must be a string, got ${P.typeName(modelType)}`);
    }
    const text = get(config, "text_config");
    if (P.isMapping(text) && modelType !== null && P.truthy(get(get(modelTypes(), modelType) || {}, "text_model_type"))) {
      const inner = get(text, "model_type");
      if (inner !== null && typeof inner !== "string") {
        throw typeError(`config['text_config']['model_type'] must be a string, got ${P.typeName(inner)}`);
      }
      return [textModelType(modelType, inner), text];
    }
    return [modelType, config];
  }

  function rawParameters(config) {
    let merged = null;
    for (const key of ["rope_scaling", "rope_parameters"]) {
      const value = get(config, key);
      if (value === null) continue;
      if (!P.isMapping(value)) throw typeError(`config[${repr(key)}] must be a dict or None, got ${P.typeName(value)}`);
      merged = merged === null ? {} : merged;
      for (const name of P.keys(value)) {
        const item = value[name];
        if (has(merged, name) && !P.equal(merged[name], item)) {
          throw valueError(`config is inconsistent: rope_scaling[${repr(name)}] = ${repr(merged[name])} but ` +
            `rope_parameters[${repr(name)}] = ${repr(item)}`);
        }
        P.setKey(merged, name, P.deepCopy(item));
      }
    }
    return merged;
  }

  function nestedForm(params, names) {
    const values = P.keys(params).map((k) => params[k]);
    return P.truthy(params) && values.every((v) => P.isMapping(v) || v === null) &&
      (!names.size || P.keys(params).every((k) => names.has(k) || ATTENTION_LAYER_TYPES.includes(k)));
  }

  /** The rope parameters of each layer type (a Map; the key null: one set for every layer). */
  function parameters(config, found, layerTypes) {
    const raw = rawParameters(config);
    const defaults = P.deepCopy(get(found, "default_rope_parameters")) || {};
    const names = new Set([...layerTypes, ...P.keys(defaults).filter((k) => P.isMapping(defaults[k]))]);
    let nested;
    if (raw !== null && nestedForm(raw, names)) {
      nested = new Map(P.keys(raw).map((k) => [k, raw[k]]));
    } else if (P.truthy(defaults) && nestedForm(defaults, names)) { // a flat config of a per-layer-type model (Gemma 3)
      if (P.truthy(raw) && !P.truthy(get(found, "flat_scaling_layer_types"))) { // the class keeps it flat; its model fails
        throw valueError("config['rope_parameters'] (or 'rope_scaling') must map each layer type to its parameters for " +
          `this model type (${P.keys(defaults).map(repr).join(", ")}), got one set ${P.reprCut(raw, 80)}`);
      }
      // null: a NoPE layer type (Beam)
      nested = new Map(P.keys(defaults).map((k) => [k, defaults[k] === null ? null : { ...defaults[k] }]));
      for (const layerType of (P.truthy(raw) ? get(found, "flat_scaling_layer_types") || [] : [])) {
        const target = nested.get(layerType) || {};
        for (const k of P.keys(raw || {})) if (k !== "rope_theta") P.setKey(target, k, raw[k]);
      }
      const baseKeys = get(found, "base_keys") || {};
      for (const layerType of P.keys(baseKeys)) {
        const key = baseKeys[layerType];
        if (get(config, key) !== null && P.get(nested, layerType) !== null) nested.get(layerType).rope_theta = config[key];
      }
      if (P.truthy(raw) && get(raw, "rope_theta") !== null) {
        const named = P.sortedStrings([...new Set(P.keys(baseKeys).map((k) => baseKeys[k]))]);
        throw valueError("config['rope_scaling'] must not hold 'rope_theta' in a config with one RoPE per layer type; " +
          `give the bases as the config class names them (${named.join(", ")})`);
      }
    } else {
      nested = new Map([[null, raw !== null ? raw : defaults]]);
    }
    for (const [layerType, params] of nested) {
      if (params !== null) complete(config, found, layerType, params, layerType === null);
    }
    return nested;
  }

  function complete(config, found, layerType, params, flat) {
    if (flat) { // rope_theta and partial_rotary_factor may come from the top level, as the class reads them
      const ignored = get(found, "ignored_top_level") || [];
      const aliases = get(found, "key_aliases") || {};
      for (const target of ["rope_theta", "partial_rotary_factor"]) {
        const names = (ignored.includes(target) ? [] : [target]).concat(P.keys(aliases).filter((k) => aliases[k] === target));
        const top = one(target, ...names.map((name) => [`config[${repr(name)}]`, { [target]: get(config, name) }]));
        if (get(params, target) === null) {
          params[target] = top !== null ? top : get(get(found, "absent_defaults") || {}, target);
        } else if (top !== null) {
          one(target, ["rope_parameters", params], ["config", { [target]: top }]);
        }
        if (params[target] === null) delete params[target];
      }
    }
    if (get(params, "rope_theta") === null) params.rope_theta = defaultTheta(found, layerType);
    const given = one("rope_type", ["rope_parameters", params]);
    const kind = P.truthy(given) ? given : P.truthy(get(params, "type")) ? params.type : "default";
    if (typeof kind !== "string") throw typeError(`rope_type must be a string such as 'yarn', got ${P.typeName(kind)} ${repr(kind)}`);
    if (get(params, "type") !== null && get(params, "rope_type") !== null && !P.equal(params.type, kind)) {
      throw valueError(`config is inconsistent: rope type ${repr(params.type)} under 'type' but ${repr(kind)} under 'rope_type'`);
    }
    const aliases = get(found, "type_aliases") || {};
    params.rope_type = has(aliases, kind) ? aliases[kind] : kind;
    delete params.type;
  }

  // ---- widths -----------------------------------------------------------------------------
  function headDim(config, found, layerType) {
    const overrides = get(config, "per_layer_config"), types = tableGet(found, config, "layer_types");
    if (layerType !== null && P.isMapping(overrides) && P.isList(types)) { // Gemma 4
      const byIndex = new Map();
      for (const key of P.keys(overrides)) {
        if (/^[0-9]+$/.test(key)) byIndex.set(Number(BigInt(key)), override(key, overrides[key]));
      }
      const dims = new Map(); // a Python set of the values (ints or None)
      types.forEach((kind, i) => {
        if (!P.equal(kind, layerType)) return;
        const dim = byIndex.has(i) ? byIndex.get(i) : null;
        const known = [...dims.keys()].find((d) => P.equal(d, dim));
        if (known === undefined) dims.set(dim, true);
      });
      if (dims.size > 1) {
        const shown = P.sortedStrings([...dims.keys()].map(P.str));
        throw valueError(`config is inconsistent: layers of type ${repr(layerType)} have different head_dim ` +
          `overrides in 'per_layer_config': ${repr(shown)}`);
      }
      const dim = dims.size ? [...dims.keys()][0] : null;
      if (dim !== null) return dim;
    }
    let source = get(found, "head_dim_from");
    if (!P.truthy(found) && get(config, "qk_rope_head_dim") !== null) source = { key: "qk_rope_head_dim", over_head_dim: true };
    const given = tableGet(found, config, "head_dim");
    if (P.truthy(source) && get(config, source.key) !== null && (source.over_head_dim || given === null)) {
      return P.checkInt(`config[${repr(source.key)}]`, config[source.key], { minimum: 2, maximum: S.MAX_ROPE_DIM });
    }
    const dim = field(found, config, "head_dim");
    if (dim !== null) return P.checkInt("config['head_dim']", dim, { minimum: 2, maximum: S.MAX_ROPE_DIM });
    const names = get(found, "attribute_map") || {};
    const hiddenKey = get(config, "hidden_size") !== null ? "hidden_size" : get(names, "hidden_size") ?? "n_embd";
    const headsKey = get(config, "num_attention_heads") !== null ? "num_attention_heads"
      : get(names, "num_attention_heads") ?? "n_head";
    if (get(config, hiddenKey) === null || get(config, headsKey) === null) {
      throw valueError("config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'");
    }
    const hidden = P.checkInt(`config[${repr(hiddenKey)}]`, config[hiddenKey], { minimum: 1, maximum: MAX_SIZE });
    const heads = P.checkInt(`config[${repr(headsKey)}]`, config[headsKey], { minimum: 1, maximum: MAX_SIZE });
    if (hidden % heads !== 0) {
      throw valueError(`config[${repr(hiddenKey)}] (${hidden}) must be a multiple of config[${repr(headsKey)}] ` +
        `(${heads}) when there is no 'head_dim'`);
    }
    if (hidden / heads > S.MAX_ROPE_DIM) {
      throw valueError(`config[${repr(hiddenKey)}] / config[${repr(headsKey)}] (the head width, without 'head_dim') ` +
        `must be <= ${S.MAX_ROPE_DIM}, got ${hidden} / ${heads} = ${hidden / heads}`);
    }
    return hidden / heads;
  }

  /** The head_dim one entry of Gemma 4's per_layer_config sets (null: it sets none). */
  function override(key, value) {
    if (value !== null && !P.isMapping(value)) {
      throw typeError(`config['per_layer_config'][${repr(key)}] must be a dict of one layer's settings, got ${P.typeName(value)}`);
    }
    const dim = value === null ? null : get(value, "head_dim");
    const name = `config['per_layer_config'][${repr(key)}]['head_dim']`;
    return dim === null ? null : P.checkInt(name, dim, { minimum: 2, maximum: S.MAX_ROPE_DIM });
  }

  function rotaryWidth(config, found, params, dim) {
    const fraction = get(params, "partial_rotary_factor");
    const key = get(found, "rotated_width_key"); // GPT-J's "rotary_dim": a count of features
    let width;
    if (fraction !== null) {
      const product = P.toNumber(dim) * P.checkFloat("partial_rotary_factor", fraction, { minimum: 0.0, maximum: 1.0 });
      if (!Number.isFinite(product)) throw new P.PyError("OverflowError", "int too large to convert to float");
      width = P.normalInt(BigInt(Math.trunc(product)));
    } else if (P.truthy(key) && get(config, key) !== null) {
      width = P.checkInt(`config[${repr(key)}]`, config[key], { minimum: 2, maximum: dim });
    } else {
      width = dim;
    }
    if (P.less(width, 2) || P.big(width) % 2n !== 0n) {
      throw valueError(`the rotated width must be a positive even integer, got ${width} ` +
        `(head_dim ${dim}, partial rotary factor ${P.str(fraction)})`);
    }
    return width;
  }

  function contextLength(config, found, key = "max_position_embeddings") {
    const value = field(found, config, key);
    return value === null ? null : P.checkInt(`config[${repr(key)}]`, value, { minimum: 1, maximum: MAX_LENGTH });
  }

  // ---- one kind of layer ---------------------------------------------------------------------
  function scalingOf(config, found, params) {
    const kind = params.rope_type;
    if (!has(ROPE_TYPES, kind)) {
      throw valueError(`rope_type must be one of ${P.keys(ROPE_TYPES).map(repr).join(", ")} (the types posenc reads ` +
        `from a config), got ${repr(kind)}`);
    }
    const ignored = get(found, "ignore_keys") || [];
    for (const key of P.keys(params)) {
      if (!COMMON.includes(key) && !ROPE_TYPES[kind].includes(key) && !ignored.includes(key)) {
        const allowed = P.sortedStrings([...new Set([...COMMON, ...ROPE_TYPES[kind], ...ignored])].filter((k) => k !== "type"));
        throw valueError(`rope parameters of type ${repr(kind)} got the unknown key ${repr(key)} ` +
          `(allowed: ${allowed.map(repr).join(", ")})`);
      }
    }
    if (kind === "default") return null;
    const scaling = { type: kind };
    for (const k of P.keys(params)) if (ROPE_TYPES[kind].includes(k) && params[k] !== null) P.setKey(scaling, k, params[k]);
    const longest = contextLength(config, found);
    if (kind === "dynamic") { // transformers counts from max_position_embeddings
      if (longest === null) {
        throw valueError("config needs 'max_position_embeddings' for rope type 'dynamic' (the length past which the base grows)");
      }
      scaling.original_max_position_embeddings = longest;
    }
    if (WITH_ORIGINAL.includes(kind)) {
      let trained = one("original_max_position_embeddings", ["rope_parameters", params], ["config", config]);
      trained = trained === null ? longest : trained;
      if (trained === null) {
        throw valueError("config needs 'original_max_position_embeddings' or 'max_position_embeddings' for rope type " +
          repr(kind));
      }
      scaling.original_max_position_embeddings = P.checkInt("original_max_position_embeddings", trained,
        { minimum: 1, maximum: MAX_LENGTH });
      if (get(scaling, "factor") === null && longest !== null) {
        if (kind === "yarn") scaling.factor = longest / scaling.original_max_position_embeddings;
        if (kind === "longrope") scaling.max_position_embeddings = longest;
      }
    }
    if (kind === "proportional") {
      scaling.partial_rotary_factor = has(params, "partial_rotary_factor") ? params.partial_rotary_factor : 1.0;
    }
    S.parseScaling(scaling); // every value named and checked
    return scaling;
  }

  /** A factor on the queries after the rotation, by position (see read_config). */
  function temperatureOf(config, found, params, rotates) {
    const rule = get(found, "query_temperature");
    if (rule === "llama_4_scaling_beta" && params !== null && get(params, "llama_4_scaling_beta") !== null) {
      const beta = P.checkFloat("rope_parameters['llama_4_scaling_beta']", params.llama_4_scaling_beta,
        { minimum: 0.0, maximum: 1e6 });
      const length = P.checkInt("rope_parameters['original_max_position_embeddings']",
        get(params, "original_max_position_embeddings"), { minimum: 1, maximum: MAX_LENGTH });
      return { rule: "llama_4_scaling_beta", beta, length };
    }
    if (rule === "llama4_nope_tuning" && !rotates && P.truthy(field(found, config, "attn_temperature_tuning"))) {
      const floor = P.checkInt("config['floor_scale']", field(found, config, "floor_scale"), { minimum: 1, maximum: MAX_LENGTH });
      const scale = P.checkFloat("config['attn_scale']", field(found, config, "attn_scale"), { minimum: 0.0, maximum: 1e6 });
      return { rule: "llama4_nope_tuning", floor_scale: floor, attn_scale: scale };
    }
    return null;
  }

  function softmaxScale(found, params) {
    // DeepSeek-V2/V3 (transformers' yarn_apply_mscale): the logits' 1/sqrt(d) times m(s, mscale_all_dim)^2.
    if (get(found, "softmax_scale") !== "yarn_mscale_all_dim" || params === null) return 1.0;
    const kind = has(params, "rope_type") ? params.rope_type : "default";
    if (kind === "default" || !P.truthy(get(params, "mscale_all_dim"))) return 1.0;
    const factor = P.checkFloat("rope_parameters['factor']", get(params, "factor"), { positive: true });
    return S.yarnMscale(factor, P.checkFloat("rope_parameters['mscale_all_dim']", params.mscale_all_dim)) ** 2;
  }

  function layoutFor(config, found, modelType, given) {
    const derived = P.truthy(found) ? layoutOf(found, config) : null;
    if (given !== null && derived !== null && given !== derived) {
      throw valueError(`layout must be ${repr(derived)} for model type ${repr(modelType)} (how transformers' code for ` +
        `it pairs q/k features), got layout=${repr(given)}`);
    }
    if (given !== null || derived !== null) return given || derived;
    const why = modelType === null ? "the config has no 'model_type'"
      : !P.truthy(lookup(modelType)) ? `the pinned transformers has no model type ${repr(modelType)}`
        : `posenc could not derive it from transformers' code for model type ${repr(modelType)}`;
    throw valueError(`layout is needed: ${why}; pass layout='half' (features i and i + d/2 form a pair, as GPT-NeoX ` +
      "and Llama in transformers) or layout='interleaved' (features 2i and 2i + 1, as GPT-J and Meta's original code)");
  }

  global.posencRopeParams = Object.freeze({
    MAX_LENGTH, MAX_NESTING, ROPE_TYPES, ATTENTION_LAYER_TYPES, NOT_ATTENTION_LAYER_TYPES, modelTypes, entry, lookup, tableGet,
    field, everyK, asMapping, tooDeep, textPart, parameters, headDim, rotaryWidth, contextLength, scalingOf, temperatureOf,
    softmaxScale, layoutFor,
  });
})(typeof window !== "undefined" ? window : globalThis);
