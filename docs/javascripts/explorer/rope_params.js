// How transformers' config classes complete a model's RoPE parameters: a port of
// posenc/configs/_table.py and posenc/configs/_params.py (same rules, same order of checks; each error of the same class, about the same key).
// What differs between model types comes from posenc/configs/model_types.json, which the site serves
// unchanged (hooks/rope_data.py writes it into assets/posenc/rope-data.js): nothing is retyped here.
// The port is five files, loaded in this order: rope_table.js (the table), rope_layer.js (one
// kind of layer: widths, scaling, temperature, layout), rope_sites.js (rotary sites, DeepSeek-V4),
// rope_text_part.js (a config's text part) and this one (the RoPE parameters of each layer type as
// transformers' config classes complete them), which gathers all five into window.posencRopeParams.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const T = global.posencRopeTable;
  const L = global.posencRopeLayer;
  const S = global.posencRopeScaling;
  const { valueError, typeError, repr, get, has } = P;
  const { ATTENTION_LAYER_TYPES, modelTypes, textModelType, defaultTheta, differs } = T;
  const { one } = L;

  /** rope_scaling and rope_parameters as the config gives them, without a source the class ignores. */
  function sources(config, found) {
    const out = new Map();
    const ignored = get(found, "ignored_sources") || [];
    for (const key of ["rope_scaling", "rope_parameters"]) {
      const value = get(config, key);
      if (value === null) continue;
      if (!P.isMapping(value)) throw typeError(`config[${repr(key)}] must be a dict or None, got ${P.typeName(value)}`);
      if (!ignored.includes(key)) out.set(key, value);
    }
    return out;
  }

  function merged(found) {
    let out = null;
    for (const value of found.values()) {
      out = out === null ? {} : out;
      for (const name of P.keys(value)) {
        const item = value[name];
        if (has(out, name) && !P.equal(out[name], item)) {
          throw valueError(`config is inconsistent: rope_scaling[${repr(name)}] = ${repr(out[name])} but ` +
            `rope_parameters[${repr(name)}] = ${repr(item)}`);
        }
        P.setKey(out, name, P.deepCopy(item));
      }
    }
    return out;
  }

  function nestedForm(params, names) {
    const values = P.keys(params).map((k) => params[k]);
    return P.truthy(params) && values.every((v) => P.isMapping(v) || v === null) &&
      (!names.size || P.keys(params).every((k) => names.has(k) || ATTENTION_LAYER_TYPES.includes(k)));
  }

  const copyEntry = (v) => (v === null ? null : { ...P.deepCopy(v) });

  /** The rope parameters of each layer type (a Map; the key null: one set for every layer); what the
   * class ignores is pushed onto `notes`. */
  function parameters(config, found, layerTypes, notes = []) {
    const given = sources(config, found);
    for (const key of get(found, "ignored_sources") || []) {
      if (get(config, key) !== null) notes.push(`transformers' config class for this model type ignores config[${repr(key)}]`);
    }
    if (P.truthy(get(found, "fixed_tables"))) { // GPT-J, CodeGen: base 10000 and no scaling, whatever the config says
      const set = ["rope_scaling", "rope_parameters", "rope_theta"].filter((key) => get(config, key) !== null);
      if (set.length) {
        notes.push("transformers' code for this model type uses fixed tables (base 10000, no scaling): it ignores " +
          set.map((key) => `config[${repr(key)}]`).join(", "));
      }
      return new Map([[null, { rope_type: "default", rope_theta: 10000.0 }]]);
    }
    const defaults = P.deepCopy(get(found, "default_rope_parameters")) || {};
    const names = new Set([...layerTypes, ...P.keys(defaults).filter((k) => P.isMapping(defaults[k]))]);
    const perType = P.truthy(defaults) && nestedForm(defaults, names); // a class with one RoPE per layer type
    const relied = []; // what comes from defaults the class computes (from keys posenc does not read)
    const entries = given.has("rope_parameters") ? given.get("rope_parameters") : null;
    let nested;
    if (perType && entries !== null && nestedForm(entries, names)) {
      if (given.has("rope_scaling")) {
        throw valueError("config gives both 'rope_parameters' by layer type and a flat 'rope_scaling'; " +
          "move the scaling into the entries of 'rope_parameters'");
      }
      nested = new Map(P.keys(entries).map((k) => [k, copyEntry(entries[k])]));
      completeEntries(config, found, nested, relied);
    } else if (perType) { // a flat config of a per-layer-type model (Gemma 3 as published)
      nested = fromFlat(config, found, defaults, given, notes);
      relied.push("'rope_parameters' by layer type");
    } else {
      const raw = merged(given);
      if (raw !== null && nestedForm(raw, names)) {
        nested = new Map(P.keys(raw).map((k) => [k, raw[k]]));
      } else {
        nested = new Map([[null, raw !== null ? raw : defaults]]);
        if (raw === null && P.keys(defaults).some((k) => k !== "rope_type")) relied.push("'rope_parameters'");
      }
    }
    let absent = given.size === 1 && given.has("rope_scaling") ? get(found, "absent_defaults_scaling") : null;
    absent = absent === null ? get(found, "absent_defaults") || {} : absent;
    for (const [layerType, params] of nested) {
      if (params !== null) complete(config, found, layerType, params, layerType === null, absent, relied);
    }
    if ([...nested.values()].some((params) => params !== null && L.readsAlpha(found, params))) {
      notes.push(L.ALPHA_NOTE); // HunYuan: "dynamic" with alpha is a fixed base (refused with another type)
    }
    const source = get(found, "head_dim_from"); // Mistral 4's fraction follows its summed keys: read from them
    const summed = P.truthy(source) && P.truthy(get(source, "plus")) ? [source.key, ...source.plus] : [];
    const changed = (get(found, "defaults_depend_on") || [])
      .filter((group) => !P.keys(group).every((key) => summed.includes(key)))
      .filter((group) => P.keys(group).every((key) => differs(config, key, group[key])));
    if (relied.length && changed.length) {
      const named = changed.flatMap((group) => P.keys(group).map(repr)).join(", ");
      throw valueError(`config needs ${[...new Set(relied)].join(" and ")} for this model type: its config class ` +
        `computes the default from keys this config changes (${named}), by a rule posenc does not derive`);
    }
    return nested;
  }

  /** The entries a per-layer-type class makes of a flat rope_scaling or rope_parameters. */
  function fromFlat(config, found, defaults, given, notes) {
    if (given.size > 1) {
      throw valueError("config gives both a flat 'rope_scaling' and a flat 'rope_parameters' for a model type with one " +
        `RoPE per layer type (${P.keys(defaults).map(repr).join(", ")}); give one, by layer type`);
    }
    const [source, flat] = given.size ? [...given][0] : [null, null];
    if (P.truthy(flat) && P.keys(flat).some((k) => P.isMapping(flat[k]))) {
      throw valueError(`config[${repr(source)}] mixes entries by layer type with flat settings: give each layer type ` +
        `its parameters (${P.keys(defaults).map(repr).join(", ")}), or one flat set`);
    }
    const landing = source !== null ? get(get(found, "flat_landing") || {}, source) : { layer_types: [], theta: [] };
    if (landing === null) { // the class keeps it flat (its model then fails), or spreads it in a way not followed
      throw valueError(`config[${repr(source)}] must map each layer type to its parameters for this model type ` +
        `(${P.keys(defaults).map(repr).join(", ")}), got one set ${P.reprCut(flat || {}, 80)}`);
    }
    const nested = new Map(P.keys(defaults).map((k) => [k, defaults[k] === null ? null : { ...defaults[k] }])); // null: NoPE (Beam)
    for (const layerType of landing.layer_types) {
      for (const k of P.keys(flat || {})) if (k !== "rope_theta") P.setKey(nested.get(layerType), k, P.deepCopy(flat[k]));
    }
    const baseKeys = get(found, "base_keys") || {};
    for (const layerType of P.keys(baseKeys)) {
      const key = baseKeys[layerType];
      if (get(config, key) !== null && P.get(nested, layerType) !== null) nested.get(layerType).rope_theta = config[key];
    }
    if (P.truthy(flat) && get(flat, "rope_theta") !== null) {
      for (const layerType of landing.theta) nested.get(layerType).rope_theta = flat.rope_theta;
    }
    if (P.truthy(flat) && !landing.layer_types.length) {
      notes.push(`config[${repr(source)}] is one flat set, which transformers' config class for this model type ` +
        "ignores: every layer type keeps its default parameters");
    }
    return nested;
  }

  /** Complete the entries of a rope_parameters by layer type as the per-layer-type class does. */
  function completeEntries(config, found, nested, relied) {
    for (const [layerType, value] of nested) {
      let entry = value;
      if (entry === null && (get(found, "null_filled") || []).includes(layerType)) {
        entry = { rope_type: "default" };
        nested.set(layerType, entry);
      }
      if (entry === null) continue; // NoPE where the class marks it so (Beam); an error otherwise (read_config)
      for (const key of get(found, "nested_top_level") || []) { // Step 3.5 copies a top-level partial_rotary_factor in
        if (get(entry, key) === null && get(config, key) !== null) P.setKey(entry, key, config[key]);
      }
      checkEntryFraction(found, layerType, entry);
      const spec = get(get(found, "nested_bases") || {}, layerType);
      if (get(entry, "rope_theta") === null && P.truthy(get(found, "nested_theta_required"))) {
        throw valueError(`config['rope_parameters'][${repr(layerType)}] needs 'rope_theta': transformers' config ` +
          "class for this model type leaves an entry without one with no base");
      }
      if (get(entry, "rope_theta") === null && spec !== null) {
        const key = spec.key;
        entry.rope_theta = P.truthy(key) && get(config, key) !== null ? config[key] : spec.default;
      }
      const forced = get(get(found, "nested_forced") || {}, layerType) || [];
      const fill = get(get(found, "nested_fill") || {}, layerType) || {};
      for (const key of P.keys(fill)) {
        const value = fill[key];
        if (forced.includes(key) && get(entry, key) !== null && !P.equal(entry[key], value)) {
          throw valueError(`config['rope_parameters'][${repr(layerType)}][${repr(key)}] is ${repr(entry[key])}, but ` +
            `transformers' config class for this model type sets it to ${repr(value)} itself`);
        }
        if (forced.includes(key) || get(entry, key) === null) relied.push(`rope_parameters[${repr(layerType)}][${repr(key)}]`);
        if (get(entry, key) === null) P.setKey(entry, key, value);
      }
    }
  }

  /** A rotated fraction in an entry of rope type "default" that the model's rotary module ignores. */
  function checkEntryFraction(found, layerType, entry) {
    const fraction = get(entry, "partial_rotary_factor");
    const kind = (has(entry, "rope_type") ? entry.rope_type : get(entry, "type")) || "default";
    if (fraction !== null && !P.equal(fraction, 1.0) && kind === "default" &&
        (get(found, "nested_partial_ignored") || []).includes(layerType)) {
      throw valueError(`config['rope_parameters'][${repr(layerType)}]['partial_rotary_factor'] is ${repr(fraction)}, ` +
        "which transformers' code for this model type does not apply to an entry of rope_type 'default' (it rotates " +
        "the whole head); leave it out");
    }
  }

  function complete(config, found, layerType, params, flat, absent = {}, relied = null) {
    if (flat) { // rope_theta and partial_rotary_factor may come from the top level, as the class reads them
      const ignored = get(found, "ignored_top_level") || [];
      const aliases = get(found, "key_aliases") || {};
      for (const target of ["rope_theta", "partial_rotary_factor"]) {
        const names = (ignored.includes(target) ? [] : [target]).concat(P.keys(aliases).filter((k) => aliases[k] === target));
        const top = one(target, ...names.map((name) => [`config[${repr(name)}]`, { [target]: get(config, name) }]));
        if (get(params, target) === null) {
          params[target] = top !== null ? top : get(absent || {}, target);
          if (top === null && params[target] !== null && relied !== null) relied.push(repr(target));
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


  // ---- _rotated_part: Mistral 4's attention turns its qk_rope_head_dim part with cos and sin its rotary
  // module builds from head_dim (all of it with rope type "default", head_dim * partial_rotary_factor with
  // the others); the model runs where the two agree (modeling_mistral4.py:88-104, 450-469).
  const ROTATED_PART = { mistral4: ["qk_nope_head_dim", "qk_rope_head_dim"] };

  /** _rotated_part.rotated_part: the width the attention turns (null: not such a model type); refuses the rest. */
  function rotatedPart(config, found, params, modelType) {
    const name = modelType === null ? null : textModelType(modelType);
    const keys = name !== null && has(ROTATED_PART, name) ? ROTATED_PART[name] : null;
    if (keys === null) return null;
    const [nope, rope] = keys.map((key) => P.toNumber(P.checkInt(`config[${repr(key)}]`, T.field(found, config, key),
      { minimum: 0, maximum: S.MAX_ROPE_DIM })));
    if (rope < 2 || rope % 2) {
      throw valueError(`config['${keys[1]}'] must be a positive even integer (the features its attention turns, in pairs), ` +
        `got ${rope}`);
    }
    const given = T.tableGet(found, config, "head_dim");
    const headDim = given === null ? nope + rope
      : P.toNumber(P.checkInt("config['head_dim']", given, { minimum: 2, maximum: S.MAX_ROPE_DIM }));
    const fraction = givenFraction(config);
    let built, how;
    if (get(params, "rope_type") === "default") {
      [built, how] = [headDim, `head_dim = ${headDim}, as its default rule takes it`];
    } else {
      const value = fraction === null ? rope / (nope + rope)
        : P.checkFloat("partial_rotary_factor", fraction, { minimum: 0.0, maximum: 1.0 });
      built = Math.trunc(headDim * value);
      how = `int(head_dim * partial_rotary_factor) = int(${headDim} * ${P.reprFloat(value)})` +
        (fraction !== null ? "" : ", the class's fraction");
    }
    if (built !== rope) {
      const relation = built < rope ? "narrower than" : "other than";
      throw valueError(`transformers' rotary module for model type ${repr(modelType)} builds cos and sin for ${built} ` +
        `features (${how}), ${relation} the config['${keys[1]}'] = ${rope} features its attention turns, and the model ` +
        `fails on it; give head_dim and partial_rotary_factor whose product is ${rope}, or leave them out`);
    }
    return rope;
  }

  /** _rotated_part._given_fraction: the partial_rotary_factor the config's rope parameters give (null: none). */
  function givenFraction(config) {
    for (const source of ["rope_parameters", "rope_scaling"]) {
      const value = get(config, source);
      if (P.isMapping(value) && get(value, "partial_rotary_factor") !== null) return value.partial_rotary_factor;
    }
    return null;
  }

  global.posencRopeParams = Object.freeze({
    ...T, ...L, ...global.posencRopeSites, ...global.posencRopeTextPart, rotatedPart, parameters,
  });
})(typeof window !== "undefined" ? window : globalThis);
