// One kind of layer of a config, as posenc/configs/_params.py reads it (its sections "widths" and
// "one kind of layer"): head and rotated widths, context length, the scaling rule and its checks,
// the query temperature, DeepSeek's softmax scale and the layout. Part of the port in rope_params.js.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const T = global.posencRopeTable;
  const { valueError, typeError, repr, get, has } = P;
  const { tableGet, field, lookup, layoutOf } = T;

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

  /** The value of key `name` in whichever sources have it (not None); they must agree. */
  function one(name, ...sources) {
    const found = sources.filter(([, source]) => get(source, name) !== null).map(([where, source]) => [where, get(source, name)]);
    if (new Set(found.map(([, v]) => repr(v))).size > 1) {
      throw valueError(`config is inconsistent: ${found.map(([where, v]) => `${where}[${repr(name)}] = ${repr(v)}`).join(", ")}`);
    }
    return found.length ? found[0][1] : null;
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
    const spec = get(get(found, "per_layer_head_dim") || {}, layerType);
    if (spec !== null && overrides === null) { // Gemma 4: the class writes global_head_dim into per_layer_config
      const value = get(config, spec.key);
      return value === null ? spec.default : P.checkInt(`config[${repr(spec.key)}]`, value, { minimum: 2, maximum: S.MAX_ROPE_DIM });
    }
    let source = get(found, "head_dim_from");
    if (!P.truthy(found) && get(config, "qk_rope_head_dim") !== null) source = { key: "qk_rope_head_dim", over_head_dim: true };
    const given = tableGet(found, config, "head_dim");
    const value = P.truthy(source) ? field(found, config, source.key) : null; // the class default if left out
    if (P.truthy(source) && value !== null && (source.over_head_dim || given === null)) {
      return P.checkInt(`config[${repr(source.key)}]`, value, { minimum: 2, maximum: S.MAX_ROPE_DIM });
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
    // left out: the class default; given as null: the whole head (GPT-J's `rotary_dim or embed_dim`)
    const count = P.truthy(key) ? (has(config, key) ? get(config, key) : get(get(found, "field_defaults") || {}, key)) : null;
    let width;
    if (fraction !== null) {
      const product = P.toNumber(dim) * P.checkFloat("partial_rotary_factor", fraction, { minimum: 0.0, maximum: 1.0 });
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

  /** A LayerRope record (posenc/configs/_reader.py), its fields in the dataclass's order. */
  function layerRope(layerType, rotates, more = {}) {
    return { layer_type: layerType, rotates, dim: null, rotary_dim: null, layout: null, base: null, scaling: null,
      attention_factor: 1.0, temperature: null, softmax_scale: 1.0, window: null, layers: [], note: null,
      window_sides: "before", ...more };
  }

  // ---- posenc/configs/sites.py: the rotary-site notes and DeepSeek-V4's reading -------------------
  // The rules and defaults are sites.site_data(), served as JSON text by hooks/rope_data.py.
  let sitesCache = null;
  function sites() {
    if (sitesCache === null) sitesCache = global.posencJSON.parseJSON(global.posencRopeData.sites);
    return sitesCache;
  }
  const pyFloat = (x) => (Number.isInteger(x) ? new Number(x) : x); // eslint-disable-line no-new-wrappers

  /** site_notes: every site of a layer that rotates at more than one, else the table's second site. */
  function siteNotes(modelType, found, layout) {
    const rules = (typeof modelType === "string" ? get(sites().rules, modelType) : null) || [];
    if (rules.length > 1) {
      const listed = rules.map((rule) => `${rule.name}: the ${rule.features} qk_rope_head_dim features of each ` +
        `${rule.head.join(" + ")} head, ${P.truthy(rule.layout) ? rule.layout : layout}`).join("; ");
      return [`more than one rotary site per layer (${listed}), all with the angles read here: see ` +
        "posenc.configs.sites.rotary_sites"];
    }
    const found2 = get(found, "rotary_sites") || {};
    return P.keys(found2).filter((site) => found2[site] !== layout).map((site) =>
      `transformers' code for this model type also rotates q and k in ${site}, in the ${found2[site]} layout: a ` +
      `second rotary site in the layer (the layout read here, ${layout}, is the attention's)`);
  }

  const V4_TYPES = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"];
  const v4 = (config, key) => { const value = get(config, key); return value === null ? sites().v4_defaults[key] : value; };
  const v4HeadDim = (config) => P.checkInt("config['head_dim']", v4(config, "head_dim"), { minimum: 2, maximum: S.MAX_ROPE_DIM });

  /** _v4_layer_types: layer_types, else compress_ratios (0, 4, 128), else the class's alternation. */
  function v4LayerTypes(config) {
    const layers = P.checkInt("config['num_hidden_layers']", v4(config, "num_hidden_layers"), { minimum: 1, maximum: 2 ** 20 });
    let types = get(config, "layer_types");
    const ratios = get(config, "compress_ratios");
    const source = types !== null || ratios === null ? "layer_types" : "compress_ratios";
    const byRatio = sites().v4_by_ratio;
    if (types === null && ratios !== null) {
      if (!P.isList(ratios) || ratios.some((r) => !P.isInt(r) || !has(byRatio, String(r)))) {
        throw valueError("config['compress_ratios'] must be a list of 0, 4 or 128 per layer (what DeepseekV4Config maps " +
          `to layer types), got ${P.reprCut(ratios, 80)}`);
      }
      types = ratios.map((r) => byRatio[String(r)]);
    }
    if (types === null) {
      types = [...new Array(Math.min(layers, 2)).fill("heavily_compressed_attention"),
        ...[...new Array(Math.max(layers - 2, 0)).keys()].map((i) => (i % 2 ? "compressed_sparse_attention" : "heavily_compressed_attention"))];
    }
    if (!P.isList(types) || types.some((t) => !V4_TYPES.includes(t))) {
      throw valueError(`config['layer_types'] must be a list of ${V4_TYPES.map(repr).join(", ")}, got ${P.reprCut(types, 80)}`);
    }
    types = types.slice(0, layers);
    if (types.length !== layers) {
      throw valueError(`config[${repr(source)}] must have one entry per layer (${layers}), got ${types.length}: ` +
        P.reprCut(get(config, source), 80));
    }
    return types;
  }

  /** _v4_parameters: the main and compress rope parameters as DeepseekV4Config builds them. */
  function v4Parameters(config) {
    const first = get(config, "rope_parameters"), second = get(config, "rope_scaling");
    const given = P.truthy(first) ? first : P.truthy(second) ? second : {};
    if (!P.isMapping(given)) throw typeError(`config['rope_parameters'] must be a dict, got ${P.typeName(given)}`);
    if (P.isMapping(get(given, "main")) && P.isMapping(get(given, "compress"))) {
      const out = {};
      for (const label of ["main", "compress"]) {
        const entry = given[label];
        const kind = { rope_type: has(entry, "rope_type") ? entry.rope_type : has(entry, "type") ? entry.type : "default" };
        for (const k of P.keys(entry)) if (k !== "type") P.setKey(kind, k, entry[k]);
        out[label] = kind;
      }
      return out;
    }
    let partial = get(config, "partial_rotary_factor");
    if (partial === null && get(config, "qk_rope_head_dim") !== null) {
      const ropeDim = P.checkInt("config['qk_rope_head_dim']", config.qk_rope_head_dim, { minimum: 0, maximum: S.MAX_ROPE_DIM });
      partial = pyFloat(ropeDim / v4HeadDim(config));
    }
    if (partial === null) partial = sites().v4_defaults.partial_rotary_factor;
    const compress = {};
    for (const k of P.keys(given)) if (!["main", "compress", "type"].includes(k)) P.setKey(compress, k, given[k]);
    if (has(given, "type") && !has(compress, "rope_type")) compress.rope_type = given.type;
    compress.rope_theta = v4(config, "compress_rope_theta");
    compress.partial_rotary_factor = partial;
    if (!has(compress, "rope_type")) compress.rope_type = "default";
    if (compress.rope_type === "yarn" && !has(compress, "attention_factor")) compress.attention_factor = pyFloat(1);
    return { main: { rope_type: "default", rope_theta: v4(config, "rope_theta"), partial_rotary_factor: partial }, compress };
  }

  function v4Layer(config, layerType, params, window, layers) {
    const found = T.entry("deepseek_v4") || {};
    const label = layerType === "sliding_attention" ? "main" : "compress";
    const dim = v4HeadDim(config);
    const fraction = has(params, "partial_rotary_factor") ? params.partial_rotary_factor : pyFloat(1);
    const width = rotaryWidth(config, {}, { partial_rotary_factor: fraction }, dim);
    const scaling = scalingOf(config, found, params);
    const given = get(config, "rope_parameters");
    const name = P.isMapping(given) && has(given, label) ? `config['rope_parameters'][${repr(label)}]['rope_theta']`
      : label === "main" ? "config['rope_theta']" : "config['compress_rope_theta']";
    const base = P.checkFloat(name, get(params, "rope_theta"), { positive: true });
    let note = `DeepSeek-V4 turns the last ${width} of the ${dim} features of each head (the values too, then turns ` +
      `the attention output back by the query's angle); rope parameters ${repr(label)}`;
    if (label === "compress") {
      note += "; the layer also attends to compressed entries of the whole past, whose keys turn by the position of " +
        "their window's first token (see posenc.configs.sites.rotary_sites)";
    }
    return layerRope(layerType, true, { dim: width, rotary_dim: width, layout: "interleaved", base, scaling,
      attention_factor: S.ropeAttentionScaling(scaling), window, layers, note });
  }

  /** read_deepseek_v4(config, layout): DeepSeek-V4's positions per kind of layer (config: its text part). */
  function readDeepseekV4(config, layout = null) {
    if (layout !== null && layout !== "interleaved") {
      throw valueError("layout must be 'interleaved' for model type 'deepseek_v4' (how transformers' code for it pairs " +
        `q/k features: modeling_deepseek_v4.py:346-370), got layout=${repr(layout)}`);
    }
    const types = v4LayerTypes(config);
    const params = v4Parameters(config);
    let window = has(config, "sliding_window") ? get(config, "sliding_window") : sites().v4_defaults.sliding_window;
    window = window === null ? null : P.checkInt("config['sliding_window']", window, { minimum: 1, maximum: 2 ** 53 });
    const kinds = new Map();
    types.forEach((kind, index) => { if (!kinds.has(kind)) kinds.set(kind, []); kinds.get(kind).push(index); });
    const layers = {};
    for (const [kind, indices] of kinds) {
      layers[kind] = v4Layer(config, kind, params[kind === "sliding_attention" ? "main" : "compress"], window, indices);
    }
    const originals = Object.values(layers).filter((l) => P.truthy(l.scaling) && has(l.scaling, "original_max_position_embeddings")
      && l.scaling.type !== "dynamic").map((l) => l.scaling.original_max_position_embeddings);
    const longest = P.checkInt("config['max_position_embeddings']", v4(config, "max_position_embeddings"), { minimum: 1, maximum: 2 ** 53 });
    const notes = [`config['sliding_window'] (${P.str(window)}) limits the uncompressed keys of every layer: transformers' ` +
      "code for this model type builds one sliding-window mask for the whole model",
    "more than one rotary site per layer: see posenc.configs.sites.rotary_sites"];
    return { model_type: "deepseek_v4", layers, pattern: types, max_position_embeddings: longest,
      original_max_position_embeddings: originals.length ? originals[0] : null, notes, sinks: true };
  }

  /** rotary_sites(config, layout): every place each kind of layer of `rope` (its reading) rotates. */
  function rotarySites(config, rope) {
    const text = global.posencRopeParams.textPart(config)[1];
    const modelType = rope.model_type;
    if (modelType === "deepseek_v4") return v4Sites(text, rope);
    const rules = typeof modelType === "string" ? get(sites().rules, modelType) : null;
    const out = {};
    for (const [name, layer] of Object.entries(rope.layers)) {
      if (!layer.rotates) out[name] = [];
      else if (rules === null) out[name] = [site(layer, "attention", "the attention's queries and keys", layer.dim, "first")];
      else {
        out[name] = rules.map((rule) => site(layer, rule.name, rule.rotates,
          rule.head.reduce((sum, key) => sum + siteKey(text, modelType, key), 0), rule.features, rule.layout));
      }
    }
    return out;
  }

  function siteKey(config, modelType, key) {
    let value = get(config, key);
    if (value === null) value = get(get(sites().defaults, modelType) || {}, key);
    if (value === null) throw valueError(`config needs ${repr(key)} for model type ${repr(modelType)} (a head width of a rotary site)`);
    return P.checkInt(`config[${repr(key)}]`, value, { minimum: 0, maximum: S.MAX_ROPE_DIM });
  }

  function site(layer, name, rotates, headDim, features, layout = null, positions = "token", inverse = false) {
    if (P.less(headDim, layer.rotary_dim)) {
      throw valueError(`the ${name} head width (${headDim}) must be at least the rotated width (${layer.rotary_dim}) ` +
        `for layers of type ${repr(layer.layer_type)}`);
    }
    return { name, rotates, head_dim: headDim, width: layer.rotary_dim, features, layout: layout || layer.layout,
      base: layer.base, scaling: layer.scaling, attention_factor: layer.attention_factor, positions, inverse };
  }

  /** _v4_sites: the attention, its output turned back, the compressor's and the indexer's sites. */
  function v4Sites(config, rope) {
    const head = v4HeadDim(config);
    const indexHead = P.checkInt("config['index_head_dim']", v4(config, "index_head_dim"), { minimum: 2, maximum: S.MAX_ROPE_DIM });
    const out = {};
    for (const [kind, layer] of Object.entries(rope.layers)) {
      const found = [site(layer, "attention", "the attention's queries and its keys, which are also its values", head, "last"),
        site(layer, "output", "the attention output, turned back by the query's angle", head, "last", null, "token", true)];
      if (kind !== "sliding_attention") {
        found.push(site(layer, "compressor", "the compressed keys (and values)", head, "last", null, "window start"));
      }
      if (kind === "compressed_sparse_attention") {
        found.push(site(layer, "indexer", "the indexer's queries", indexHead, "last"),
          site(layer, "indexer keys", "the indexer's compressed keys", indexHead, "last", null, "window start"));
      }
      out[kind] = found;
    }
    return out;
  }

  global.posencRopeLayer = Object.freeze({
    MAX_LENGTH, ROPE_TYPES, one, headDim, rotaryWidth, contextLength, scalingOf, temperatureOf, softmaxScale, layoutFor,
    layerRope, siteNotes, readDeepseekV4, rotarySites,
  });
})(typeof window !== "undefined" ? window : globalThis);
