// The rotary sites of a layer and DeepSeek-V4's reading, as posenc/configs/sites.py has them: the notes
// on a layer that rotates at more than one site, the inspector's line per site (rotarySites) and
// read_deepseek_v4 (rope parameters keyed by rope kind). Loaded after rope_layer.js, whose one kind of
// layer it builds on; rope_params.js gathers it into window.posencRopeParams.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const T = global.posencRopeTable;
  const { valueError, typeError, repr, get, has } = P;
  const { rotaryWidth, scalingOf, layerRope } = global.posencRopeLayer;

  // The rules and defaults are sites.site_data(), served as JSON text by hooks/rope_data.py.
  let sitesCache = null;
  function sites() {
    if (sitesCache === null) sitesCache = global.posencJSON.parseJSON(global.posencRopeData.sites);
    return sitesCache;
  }
  // where a reader finds each site: the page's inspector, posenc-inspect and the API (sites.py _WHERE, word for word)
  const WHERE = "listed site by site by the inspector and by posenc.configs.sites.rotary_sites";
  const pyFloat = (x) => (Number.isInteger(x) ? new Number(x) : x); // eslint-disable-line no-new-wrappers

  /** site_notes: every site of a layer that rotates at more than one, else the table's second site. */
  function siteNotes(modelType, found, layout) {
    const rules = (typeof modelType === "string" ? get(sites().rules, modelType) : null) || [];
    if (rules.length > 1) {
      const listed = rules.map((rule) => `${rule.name}: the ${rule.features} ${rule.width} features of each ` +
        `${rule.head.join(" + ")} head, ${P.truthy(rule.layout) ? rule.layout : layout}`).join("; ");
      return [`more than one rotary site per layer (${listed}), all with the angles read here, ${WHERE}`];
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
        `their window's first token (a site of its own, ${WHERE})`;
    }
    return layerRope(layerType, true, { dim: width, rotary_dim: width, layout: "interleaved", base, scaling,
      attention_factor: S.ropeAttentionScaling(scaling), window, layers, note });
  }

  /** read_deepseek_v4(config, layout): DeepSeek-V4's positions per kind of layer (config: its text part). */
  function readDeepseekV4(config, layout = null) {
    if (global.posencRopeTwoWay.notCausal(config, "deepseek_v4")) { // its one sliding mask then opens both ways
      throw valueError("config['is_causal'] is false, and posenc does not know which mask DeepSeek-V4's compressed " +
        "layers then get (transformers opens its sliding masks both ways)");
    }
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
    `more than one rotary site per layer, ${WHERE}`];
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
          rule.head.reduce((sum, key) => sum + siteKey(text, modelType, key), 0), rule.features, rule.layout,
          rule.positions));
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

  global.posencRopeSites = Object.freeze({ siteNotes, readDeepseekV4, rotarySites });
})(typeof window !== "undefined" ? window : globalThis);
