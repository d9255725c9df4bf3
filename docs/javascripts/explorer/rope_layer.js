// One kind of layer of a config, as posenc/configs/_layer.py reads it (its sections "widths" and
// "one kind of layer"): head and rotated widths, context length, the scaling rule and its checks,
// the query temperature, DeepSeek's softmax scale and the layout (HunYuan's fixed NTK alpha:
// rope_ntk_alpha.js). Part of the port in rope_params.js.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const T = global.posencRopeTable;
  const { valueError, typeError, repr, get, has } = P;
  const { tableGet, field, lookup, layoutOf } = T;
  const { ALPHA_UNREAD, ALPHA, ALPHA_NOTE, readsAlpha, alphaScaling } = global.posencRopeNtkAlpha; // HunYuan's alpha

  const MAX_LENGTH = 2 ** 53;
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
  // _layer.SCALED_RULES: the rope utils' rules that narrow the frequencies to head_dim * partial_rotary_factor
  const SCALED_RULES = P.keys(ROPE_TYPES).filter((kind) => kind !== "default" && kind !== "proportional");

  /** The value of key `name` in whichever sources have it (not None); they must agree. */
  function one(name, ...sources) {
    const found = sources.filter(([, source]) => get(source, name) !== null).map(([where, source]) => [where, get(source, name)]);
    if (new Set(found.map(([, v]) => repr(v))).size > 1) {
      throw valueError(`config is inconsistent: ${found.map(([where, v]) => `${where}[${repr(name)}] = ${repr(v)}`).join(", ")}`);
    }
    return found.length ? found[0][1] : null;
  }

  // ---- widths -----------------------------------------------------------------------------
  /** _head_dim: the head width; the keys taken from the class defaults (sizes) join `defaulted`. */
  function headDim(config, found, layerType, defaulted = null) {
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
    const spec = get(get(found, "per_layer_head_dim") || {}, layerType);
    if (spec !== null && overrides === null) { // Gemma 4: the class writes global_head_dim into per_layer_config
      const value = get(config, spec.key);
      return value === null ? spec.default : P.checkInt(`config[${repr(spec.key)}]`, value, { minimum: 2, maximum: S.MAX_ROPE_DIM });
    }
    let source = get(found, "head_dim_from");
    if (!P.truthy(found) && get(config, "qk_rope_head_dim") !== null) source = { key: "qk_rope_head_dim", over_head_dim: true };
    const given = tableGet(found, config, "head_dim");
    const value = P.truthy(source) ? fromKeys(config, found, source, given) : null;
    // Mistral 4's heads are the sum wide; a given head_dim feeds its rotary module only
    if (P.truthy(source) && value !== null && (source.over_head_dim || given === null || P.truthy(get(source, "plus")))) {
      return value;
    }
    const dim = field(found, config, "head_dim");
    if (dim !== null) return P.checkInt("config['head_dim']", dim, { minimum: 2, maximum: S.MAX_ROPE_DIM });
    const [[hiddenKey, hidden], [headsKey, heads]] = sizes(config, found, defaulted);
    const factor = Number(get(source || {}, "hidden_factor") ?? 1); // Zamba2: attention_head_dim = 2 * hidden_size // heads
    const width = factor * hidden, shown = factor !== 1 ? `${factor} * config[${repr(hiddenKey)}]` : `config[${repr(hiddenKey)}]`;
    if (width % heads !== 0) {
      throw valueError(`${shown} (${width}) must be a multiple of config[${repr(headsKey)}] (${heads}) when there is ` +
        "no 'head_dim'");
    }
    if (width / heads > S.MAX_ROPE_DIM) {
      throw valueError(`${shown} / config[${repr(headsKey)}] (the head width, without 'head_dim') ` +
        `must be <= ${S.MAX_ROPE_DIM}, got ${width} / ${heads} = ${width / heads}`);
    }
    return width / heads;
  }

  /** _sizes: [key, value] of the hidden size and of the number of heads, as the config gives them
   * (GPT-J's n_embd, n_head), else the config class's defaults (field_defaults), whose keys join `defaulted`. */
  function sizes(config, found, defaulted) {
    const names = get(found, "attribute_map") || {}, defaults = get(found, "field_defaults") || {};
    const read = [], taken = [];
    for (const [key, other] of [["hidden_size", "n_embd"], ["num_attention_heads", "n_head"]]) {
      let name = get(config, key) !== null ? key : get(names, key) ?? other, value;
      const absent = !has(config, key) && !has(config, name); // null is not absent: the class refuses None
      if (absent && get(defaults, key) !== null) {
        [name, value] = [key, get(defaults, key)];
        taken.push(key);
      } else {
        value = get(config, name);
      }
      read.push([name, value]);
    }
    if (read.some(([, value]) => value === null)) {
      throw valueError("config needs 'head_dim', or 'hidden_size' and 'num_attention_heads'");
    }
    if (defaulted !== null) defaulted.push(...taken.filter((key) => !defaulted.includes(key)));
    return read.map(([name, value]) => [name, P.checkInt(`config[${repr(name)}]`, value, { minimum: 1, maximum: MAX_SIZE })]);
  }

  /** _layer.defaults_note: the head sizes read from the class defaults (a config.json transformers saves keeps them). */
  function defaultsNote(found, modelType, defaulted) {
    if (!defaulted.length) return [];
    const defaults = get(found, "field_defaults") || {};
    const shown = defaulted.map((key) => `${repr(key)} (${repr(get(defaults, key))})`).join(" and ");
    return [`${shown} ${defaulted.length > 1 ? "are" : "is"} not in the config: read as the defaults of transformers' ` +
      `config class for model type ${repr(modelType)}, as it builds such a config; a config.json that transformers ` +
      "saves carries them"];
  }

  /** The head width the class takes from source's key, or adds from its keys (Mistral 4's
   * qk_nope_head_dim + qk_rope_head_dim); a key left out has its class default (null: one has none).
   * A head_dim given beside a sum feeds the rotary module while the attention's heads stay the sum
   * wide: rotatedPart (rope_params.js) reads what that module builds. */
  function fromKeys(config, found, source, given) {
    const keys = [source.key, ...(get(source, "plus") || [])];
    const values = keys.map((key) => field(found, config, key));
    if (values.some((value) => value === null)) return null;
    if (keys.length === 1) return P.checkInt(`config[${repr(keys[0])}]`, values[0], { minimum: 2, maximum: S.MAX_ROPE_DIM });
    const total = keys.reduce((sum, key, i) =>
      sum + P.checkInt(`config[${repr(key)}]`, values[i], { minimum: 0, maximum: S.MAX_ROPE_DIM }), 0);
    const shown = keys.map((key) => `config[${repr(key)}]`).join(" + ");
    if (given !== null) P.checkInt("config['head_dim']", given, { minimum: 2, maximum: S.MAX_ROPE_DIM });
    return P.checkInt(shown, total, { minimum: 2, maximum: S.MAX_ROPE_DIM });
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

  /** _check_scaled: a fraction the attention cannot run with a scaled rule (the table's partial_scaled "fails",
   * or nested_partial_scaled's for this layer type). */
  function checkScaled(config, found, params, fraction, value, modelType, layerType) {
    const kind = get(params, "rope_type");
    const verdict = layerType === null ? null : get(get(found, "nested_partial_scaled") || {}, layerType);
    if ((verdict || get(found, "partial_scaled")) !== "fails" || !SCALED_RULES.includes(kind) || readsAlpha(found, params)) {
      return; // HunYuan's alpha turns the whole head: refused in alphaScaling
    }
    const own = verdict ? 1.0 : get(get(found, "absent_defaults") || {}, "partial_rotary_factor") ?? 1.0;
    const who = `transformers' attention for ${typeof modelType === "string" && modelType ? `model type ${repr(modelType)}` : "this model type"}`;
    const changed = (get(found, "defaults_depend_on") || [])
      .filter((group) => P.keys(group).every((key) => T.differs(config, key, group[key])))
      .flatMap((group) => P.keys(group));
    if (own !== 1.0 && changed.length) {
      throw valueError(`partial_rotary_factor is ${repr(fraction)} with rope_type ${repr(kind)}: ${who} rotates the width of ` +
        `its class's own fraction, which depends on keys this config changes (${changed.map(repr).join(", ")}) by a rule ` +
        "posenc does not derive");
    }
    if (value !== own) {
      const what = own === 1.0 ? "whole heads" : `the width of its class's own fraction, ${repr(own)},`;
      throw valueError(`partial_rotary_factor is ${repr(fraction)} with rope_type ${repr(kind)}: ${who} rotates ${what} ` +
        `and fails on the ${value < own ? "narrower" : "other"} frequencies a scaled rule computes for this fraction ` +
        "(head_dim * partial_rotary_factor); leave it out");
    }
  }

  function rotaryWidth(config, found, params, dim, modelType = null, layerType = null) {
    const part = global.posencRopeParams.rotatedPart(config, found, params, modelType); // Mistral 4's qk_rope_head_dim
    if (part !== null) return P.checkInt("the rotated width", part, { minimum: 2, maximum: dim });
    const fraction = get(params, "partial_rotary_factor");
    const key = get(found, "rotated_width_key"); // GPT-J's "rotary_dim": a count of features
    // left out: the class default; given as null: the whole head (GPT-J's `rotary_dim or embed_dim`)
    const count = P.truthy(key) ? (has(config, key) ? get(config, key) : get(get(found, "field_defaults") || {}, key)) : null;
    let width;
    if (fraction !== null) {
      const value = P.checkFloat("partial_rotary_factor", fraction, { minimum: 0.0, maximum: 1.0 });
      if (value !== 1.0 && P.truthy(get(found, "partial_ignored")) && get(params, "rope_type") === "default") {
        throw valueError(`partial_rotary_factor is ${repr(fraction)}, which transformers' code for this model type ` +
          "does not apply with rope_type 'default' (its rotary module's default rule rotates the whole head); leave it out");
      }
      checkScaled(config, found, params, fraction, value, modelType, layerType);
      const product = P.toNumber(dim) * value;
      if (!Number.isFinite(product)) throw new P.PyError("OverflowError", "int too large to convert to float");
      width = P.normalInt(BigInt(Math.trunc(product)));
    } else if (count !== null) {
      width = P.checkInt(`config[${repr(key)}]`, count, { minimum: 2, maximum: dim });
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

  /** _mrope_paired: refuse sections Ernie 4.5 VL's rotary module fails on (three, h == w, t > 0). */
  function mropePaired(found, params, modelType) {
    const demand = get(found, "mrope_sections");
    if (!P.truthy(demand) || !P.truthy(get(demand, "paired"))) return;
    const name = "config['rope_parameters']['mrope_section']";
    const absent = !has(params, "mrope_section");
    const sections = absent ? get(demand, "default") : P.get(params, "mrope_section");
    if (P.isList(sections) && sections.length === 3 && P.equal(sections[0], sections[1]) && P.less(0, sections[2])) return;
    const given = absent ? `the sections transformers' rotary module uses without ${name} (${repr(sections)})`
      : `${name} (${repr(sections)})`;
    throw valueError(`${given} must be three, [h, w, t] with h == w and t > 0: transformers' rotary module for model ` +
      `type ${repr(modelType)} interleaves the first two and places the last after them, and fails otherwise`);
  }

  // ---- one kind of layer ---------------------------------------------------------------------
  function scalingOf(config, found, params) {
    const kind = params.rope_type;
    if (!has(ROPE_TYPES, kind)) {
      throw valueError(`rope_type must be one of ${P.keys(ROPE_TYPES).map(repr).join(", ")} (the types posenc reads ` +
        `from a config), got ${repr(kind)}`);
    }
    if (kind !== "default" && P.truthy(get(found, "scaled_rules_refused"))) { // RecurrentGemma's
      throw valueError(`rope_type is ${repr(kind)}, and transformers' rotary module for this model type accepts only ` +
        "rope type 'default' (it raises for any other): leave the scaling out");
    }
    const alpha = readsAlpha(found, params);
    if (alpha && kind !== "dynamic") {
      throw valueError(`${ALPHA} = ${repr(params.alpha)} is read only with rope type 'dynamic' (HunYuan's fixed NTK ` +
        `base); transformers' code for this model type ignores it with rope type ${repr(kind)}: leave it out`);
    }
    const ignored = [...(get(found, "ignore_keys") || [])];
    // the attention's query scale reads it (temperatureOf)
    if (get(found, "query_temperature") === "llama_4_scaling_beta") ignored.push("original_max_position_embeddings");
    if (P.truthy(get(found, "ntk_alpha"))) { // HunYuan: its key (null: not given, plain "dynamic"), and with it those not read
      ignored.push(...(alpha ? ["alpha", ...ALPHA_UNREAD] : ["alpha"]));
    }
    for (const key of P.keys(params)) {
      if (!COMMON.includes(key) && !ROPE_TYPES[kind].includes(key) && !ignored.includes(key)) {
        const allowed = P.sortedStrings([...new Set([...COMMON, ...ROPE_TYPES[kind], ...ignored])].filter((k) => k !== "type"));
        throw valueError(`rope parameters of type ${repr(kind)} got the unknown key ${repr(key)} ` +
          `(allowed: ${allowed.map(repr).join(", ")})`);
      }
    }
    if (alpha) return alphaScaling(config, found, params);
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

  /** _scale_keys_given: Ministral 3's and Mistral 4's query scale needs both keys whatever the rope type. */
  function scaleKeysGiven(params) {
    const missing = ["llama_4_scaling_beta", "original_max_position_embeddings"].filter(
      (key) => params === null || get(params, key) === null);
    if (missing.length) {
      throw valueError(`config['rope_parameters'] needs ${missing.map(repr).join(" and ")}, whatever its rope_type: ` +
        "this model type's attention multiplies its queries by 1 + llama_4_scaling_beta * ln(1 + " +
        "floor(position / original_max_position_embeddings)), and transformers' model fails without them");
    }
  }

  /** A factor on the queries after the rotation, by position (see read_config). */
  function temperatureOf(config, found, params, rotates) {
    const rule = get(found, "query_temperature");
    if (rule === "llama_4_scaling_beta" && rotates) scaleKeysGiven(params);
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

  // posenc/configs/_plan.py LONG_CONTEXT: Zamba2's class sets the length when use_long_context is on
  // (configuration_zamba2.py:117-118)
  const LONG_CONTEXT = { zamba2: { key: "use_long_context", length: 16384 } };

  /** class_length: the config with the max_position_embeddings its class sets, else unchanged. */
  function classLength(config, modelType) {
    const rule = typeof modelType === "string" && has(LONG_CONTEXT, modelType) ? LONG_CONTEXT[modelType] : null;
    if (rule === null) return config;
    const on = has(config, rule.key) ? config[rule.key] : false; // a strict field: true or false, default false
    if (!P.isBool(on)) throw typeError(`config[${repr(rule.key)}] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
    if (!on) return config;
    const out = {};
    for (const k of P.keys(config)) P.setKey(out, k, config[k]);
    P.setKey(out, "max_position_embeddings", rule.length);
    return out;
  }

  /** posenc.configs._plan.class_names: a key given under a legacy name its class maps onto it, stored
   * under the canonical name (the legacy name wins, as in the class); two that disagree are refused. */
  function classNames(config, found, modelType) {
    const renamed = get(found, "legacy_names") || {};
    const given = P.keys(renamed).filter((alias) => get(config, alias) !== null);
    if (!given.length) return config;
    const out = {};
    for (const k of P.keys(config)) P.setKey(out, k, config[k]);
    const targets = [...new Set(given.map((alias) => renamed[alias]))];
    for (const target of targets) {
      const aliases = given.filter((alias) => renamed[alias] === target);
      if (new Set(aliases.map((alias) => repr(config[alias]))).size > 1) {
        const shown = aliases.map((alias) => `config[${repr(alias)}] (${P.reprCut(config[alias], 20)})`).join(" and ");
        throw valueError(`${shown} both set ${repr(target)} for model type ${repr(modelType)} (its config class ` +
          "maps each onto it), and they differ: which one the class keeps depends on the order of the keys; give one");
      }
      P.setKey(out, target, config[aliases[0]]);
    }
    return out;
  }

  /** A LayerRope record (posenc/configs/_reader.py), its fields in the dataclass's order. */
  function layerRope(layerType, rotates, more = {}) {
    return { layer_type: layerType, rotates, dim: null, rotary_dim: null, layout: null, base: null, scaling: null,
      attention_factor: 1.0, temperature: null, softmax_scale: 1.0, window: null, layers: [], note: null,
      window_sides: "before", ...more };
  }

  global.posencRopeLayer = Object.freeze({
    MAX_LENGTH, ROPE_TYPES, ALPHA_NOTE, one, headDim, defaultsNote, rotaryWidth, contextLength, readsAlpha, mropePaired, scalingOf, temperatureOf,
    softmaxScale, layoutFor, layerRope, classLength, classNames,
  });
})(typeof window !== "undefined" ? window : globalThis);
