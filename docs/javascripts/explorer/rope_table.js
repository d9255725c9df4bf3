// The model-type table of posenc/configs/model_types.json, as posenc/configs/_table.py reads it: the
// entry of a model type (a wrapper read as its text model), the keys its config class renames or
// defaults, and the layer patterns it fills in or forces; and the windows of posenc/configs/_windows.py
// (which layers attend within a window; which see both ways: rope_two_way.js). Part of the port in rope_params.js.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, get, has } = P;
  const W = global.posencRopeTwoWay; // loaded before this module
  const { twoSided, centred, asJson, bidirectional } = W;

  const ATTENTION_LAYER_TYPES = ["full_attention", "sliding_attention", "chunked_attention", "indexed_attention",
    "reference_sliding_attention"];
  const NOT_ATTENTION_LAYER_TYPES = ["linear_attention", "mamba", "conv", "mlp", "moe"];
  // posenc.configs._table.NOT_ATTENTION_ORDER: what carries order in each (their LayerRope's note)
  const NOT_ATTENTION_ORDER = { linear_attention: "a recurrent layer, whose state carries order",
    mamba: "a recurrent layer, whose state carries order",
    conv: "a short causal convolution, which sees order within its kernel",
    mlp: "it acts on each token alone", moe: "it acts on each token alone" };

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

  /** _table.entry: a wrapper followed to its text model's entry, with the wrapper's defaults for
   * the text model (text_field_defaults) over the text class's field_defaults. */
  function entry(modelType) {
    let found = lookup(modelType), overlay = {};
    while (found !== null && P.keys(found).every((key) => WRAPPER_KEYS.includes(key))) {
      overlay = { ...(get(found, "text_field_defaults") || {}), ...overlay }; // the outer wrapper's win
      found = get(modelTypes(), found.text_model_type);
    }
    if (found !== null && P.keys(overlay).length) {
      found = { ...found, field_defaults: { ...(get(found, "field_defaults") || {}), ...overlay } };
    }
    return found;
  }
  const WRAPPER_KEYS = ["text_model_type", "text_model_type_aliases", "text_field_defaults", "text_config_merges",
    "top_level_read"];

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

  // ---- windows: a port of posenc/configs/_windows.py -------------------------------------
  const MAX_WINDOW = 2 ** 53;

  /** config[key] as the config gives it (an explicit null stays null), else the class default. */
  function givenOrDefault(config, found, key) {
    if (P.has(config, key)) return get(config, key);
    const mapped = get(get(found, "attribute_map") || {}, key);
    if (mapped !== null && P.has(config, mapped)) return get(config, mapped);
    return get(get(found, "field_defaults") || {}, key);
  }

  function windowSize(name, value) {
    if (value === null) return null;
    if (!P.isInt(value)) throw typeError(`${name} must be a positive integer or null, got ${P.typeName(value)} ${P.reprCut(value, 40)}`);
    if (!(Number(value) >= 1 && Number(value) <= MAX_WINDOW)) {
      throw valueError(`${name} must be a positive integer or null (a window of that many tokens), got ${repr(value)}; ` +
        "transformers builds a mask from it without checking (a window of 0 or less leaves a query nothing to attend to)");
    }
    return value;
  }

  function slidingWindow(config, found) {
    const window = windowSize("config['sliding_window']", givenOrDefault(config, found, "sliding_window"));
    const sw = get(found, "window_switch");
    if (!P.truthy(sw)) return window;
    const on = get(config, sw.key) !== null ? get(config, sw.key) : sw.default;
    if (!P.isBool(on)) throw typeError(`config[${repr(sw.key)}] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
    if (on && window === null) {
      throw valueError(`config[${repr(sw.key)}] is true but config['sliding_window'] is null: no window to apply ` +
        `(transformers then applies none, silently); give the window or set ${repr(sw.key)} to false`);
    }
    return on ? window : null;
  }

  function windowTypes(config, found, layers) {
    const rule = get(found, "window_layers");
    if (!P.truthy(rule) || !layers) return null;
    const window = slidingWindow(config, found);
    const key = rule.key;
    const count = get(config, key) !== null ? get(config, key) : rule.default;
    if (!P.isInt(count)) throw typeError(`config[${repr(key)}] must be an integer, got ${P.typeName(count)} ${P.reprCut(count, 40)}`);
    if (Number(count) < 0) throw valueError(`config[${repr(key)}] must be an integer >= 0 (a number of layers), got ${repr(count)}`);
    if (window === null) return new Array(layers).fill("full_attention");
    const below = rule.compare === "<";
    const m = Number(count);
    const types = [...Array(layers).keys()].map((i) => (((below ? i < m : i >= m) && (i + rule.offset) % rule.k === 0)
      ? "sliding_attention" : "full_attention"));
    if (!types.includes("sliding_attention") && P.truthy(get(found, "window_switch"))) { // turned on, on no layer
      throw valueError(`config[${repr(key)}] is ${repr(count)} with ${layers} layers, so no layer gets the sliding window the ` +
        `config turns on (transformers silently uses full attention everywhere); lower ${repr(key)} or turn the window off`);
    }
    return types;
  }

  /** posenc/configs/_windows.py layer_kind: the kind a layer type runs as (LAYER_KINDS, served as data). */
  function layerKind(modelType, layerType) {
    const kinds = typeof modelType === "string" ? get(global.posencRopeData.layer_kinds, modelType) : null;
    return kinds !== null && has(kinds, layerType) ? kinds[layerType] : layerType;
  }

  // posenc/configs/_two_way.py IS_CAUSAL_KINDS: the layers whose masks a config's own is_causal false is read for
  const IS_CAUSAL_KINDS = ["full_attention", "sliding_attention", "chunked_attention"];

  /** [window, sides]: the window or chunk of these layers (null: the whole context), "before", "both" or "centred". */
  function windowOf(config, found, layerType, modelType) {
    // a wrapper read without its text_config: its text model's rules, but for a PARTS model (the wrapper picks the stack)
    const inner = typeof modelType === "string" ? textModelType(modelType) : null;
    modelType = inner !== null && has(W.PARTS, inner) ? modelType : inner;
    const kind = layerKind(modelType, layerType.endsWith(":nope") ? layerType.slice(0, -5) : layerType);
    const rule = twoSided(modelType, config);
    if (NOT_ATTENTION_LAYER_TYPES.includes(kind)) return [null, "before"];
    const rules = bidirectional(config, modelType), openMask = W.notCausal(config, modelType);
    if (openMask && !IS_CAUSAL_KINDS.includes(kind)) {
      throw valueError("config['is_causal'] is false, and posenc does not know which mask layers of type " +
        `${repr(layerType)} then get (transformers opens its causal and sliding masks both ways)`);
    }
    if (kind === "chunked_attention") {
      return [windowSize("config['attention_chunk_size']", givenOrDefault(config, found, "attention_chunk_size")), "before"];
    }
    if (kind !== "sliding_attention" && !P.truthy(get(rule || {}, "every_layer")) && !P.truthy(get(found, "window_all_layers"))) {
      return [null, W.sidesOfFull(config, modelType)];
    }
    const fill = typeof modelType === "string" ? get(global.posencRopeData.filled, modelType) : null;
    const window = kind === "sliding_attention" && fill !== null && get(config, "sliding_window") === null
      ? filled(config, fill) : slidingWindow(config, found);
    if (rules !== null && kind === "sliding_attention") {
      if (window === null) {
        throw valueError(`config['sliding_window'] is null while config[${repr(rules.key)}] opens the masks both ` +
          "ways: transformers' code fails on null; give the window");
      }
      return [W.opened(window, rules, openMask), "both"];
    }
    if (window === null) return [null, W.sidesOfFull(config, modelType)];
    if (openMask) return [window, "both"]; // |q - k| <= W (masking_utils.py:137-147)
    return [window, rule !== null ? "both" : centred(modelType) ? "centred" : "before"];
  }

  /** The window a FILLED class sets (ModernBERT's, Dots3's): config[key] // divisor, or the class's default. */
  function filled(config, rule) {
    const value = has(config, rule.key) ? get(config, rule.key) : rule.default; // null: no window transformers could use
    if (!P.isInt(value)) throw typeError(`config[${repr(rule.key)}] must be an integer, got ${P.typeName(value)} ${P.reprCut(value, 40)}`);
    if (P.less(value, rule.divisor) || P.less(MAX_WINDOW, value)) {
      throw valueError(`config[${repr(rule.key)}] must be an integer >= ${rule.divisor} (${rule.means}), got ${repr(value)}`);
    }
    return Number(P.big(value) / BigInt(rule.divisor));
  }

  // posenc/configs/_windows.py REFERENCE_SLIDING: Unlimited-OCR's R-SWA layers see the whole prompt and the
  // last sliding_window generated tokens (modeling_unlimited_ocr.py:1679-1722)
  const REFERENCE_SLIDING = "reference_sliding_attention";

  function referenceNote(config, found) {
    const window = windowSize("config['sliding_window']", givenOrDefault(config, found, "sliding_window"));
    if (window === null) {
      throw valueError("config['sliding_window'] is null, which this model type's reference_sliding_attention layers " +
        "cannot run without (transformers' config class refuses it): give the window");
    }
    return `${REFERENCE_SLIDING} layers (R-SWA) attend to every token of the prompt and to the last ${repr(window)} ` +
      "generated tokens (config['sliding_window']), the query itself among them: the window drops old generated tokens " +
      "only, so a query sees keys at every distance, as read here (no window); one pass over a sequence without a cache " +
      "is plain causal attention";
  }

  // posenc/configs/_windows.py NOPE_LAYERS_SLIDE: SmolLM3 names its NoPE layers sliding once the window is on
  // (configuration_smollm3.py:100-112)
  const nopeLayersSlide = () => global.posencRopeData.nope_layers_slide;

  function nopeSlidingTypes(config, modelType, flags) {
    const key = typeof modelType === "string" ? get(nopeLayersSlide(), modelType) : null;
    if (key === null || flags === null) return null;
    const on = P.has(config, key) ? config[key] : false;
    if (!P.isBool(on)) throw typeError(`config[${repr(key)}] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
    const window = on && get(config, "sliding_window") !== null;
    return flags.map((rotates) => (window && !rotates ? "sliding_attention" : "full_attention"));
  }

  // _windows._ONE_MASK: why a model-wide window limits every layer, said by both of spanNotes' notes on it.
  const ONE_MASK = "transformers' code for this model type builds one sliding-window mask for the whole model";

  /** posenc/configs/_windows.py window_notes: where the window applies, and which way the masks open. */
  function windowNotes(config, found, modelType, layerTypes = []) {
    return spanNotes(config, found, modelType, layerTypes).concat(W.isCausalNotes(config, modelType, layerTypes));
  }

  function spanNotes(config, found, modelType, layerTypes) {
    if (layerTypes.includes(REFERENCE_SLIDING)) return [referenceNote(config, found)];
    const rules = bidirectional(config, modelType), openMask = W.notCausal(config, modelType);
    if (rules !== null) {
      const both = slidingWindow(config, found);
      const halves = rules.halves ? " (the config class halves config['sliding_window'])"
        : ` (|q - k| ${rules.sets_is_causal || openMask ? "<=" : "<"} config['sliding_window'])`;
      const sliding = both === null ? "" : `, the sliding layers the ${P.formatInt(W.opened(both, rules, openMask))} on ` +
        `each side${halves}`;
      return [`config[${repr(rules.key)}] is ${asJson(rules.on)}: every attention layer also sees the tokens after the ` +
        `query, the full layers all of them${sliding}`];
    }
    if (openMask) return [];
    if (P.truthy(get(twoSided(modelType) || {}, "every_layer"))) {
      const both = slidingWindow(config, found);
      return both === null ? [] : [`config['sliding_window'] (${repr(both)}) limits every attention layer on both sides ` +
        `of each query (|q - k| <= ${repr(both)}): transformers' code for this model type builds one bidirectional ` +
        "sliding-window mask for the whole model"];
    }
    const switchKey = typeof modelType === "string" ? get(nopeLayersSlide(), modelType) : null;
    const types = get(config, "layer_types");
    if (switchKey !== null && !P.truthy(get(config, switchKey)) && P.isList(types) && types.includes("sliding_attention") &&
        get(config, "sliding_window") !== null) { // SmolLM3: sliding layers named, the switch off
      return [`config[${repr(switchKey)}] is off while config['layer_types'] names sliding_attention layers: transformers' ` +
        "eager and sdpa attention apply config['sliding_window'] to them through the mask (as read here), its flash " +
        `attention does not (the layer passes the window only with ${repr(switchKey)} on: modeling_smollm3.py:193-197 ` +
        "against 401-403)"];
    }
    const window = P.truthy(get(found, "window_all_layers")) ? slidingWindow(config, found) : null;
    if (window === null) return [];
    const context = get(config, "max_position_embeddings"); // Phi-3.5 mini: 262144 against 131072
    if (P.isInt(context) && window >= context) {
      return [`config['sliding_window'] (${repr(window)}) would limit every attention layer (${ONE_MASK}), but it ` +
        `reaches across the whole declared context (config['max_position_embeddings'] = ${repr(context)}): no effect ` +
        "within it"];
    }
    return [`config['sliding_window'] (${repr(window)}) limits every attention layer: ${ONE_MASK}`];
  }

  // posenc/configs/_plan.py LEGACY_LAYER_TYPES: Dots3's class renames and derives a legacy config's layer
  // types (configuration_dots3_note.py:286-320); its full_attention layers rotate as its indexed ones
  const LEGACY_LAYER_TYPES = { dots3_note_text: { old: "full_attention", new: "indexed_attention" } };
  const copied = (mapping) => { const out = {}; for (const k of P.keys(mapping)) P.setKey(out, k, mapping[k]); return out; };

  // posenc/configs/_plan.py LEGACY_NAMES: every config class renames these layer types last
  // (configuration_utils.py:94-99, :514)
  const LEGACY_NAMES = { mamba: "linear_attention", attention: "full_attention",
    deepseek_sparse_attention: "indexed_attention", qwen_sparse_attention: "indexed_attention" };

  /** class_layer_types: [config, found] with the layer types the class writes (Dots3's rule, then LEGACY_NAMES). */
  function classLayerTypes(config, found, modelType) {
    const rule = typeof modelType === "string" && has(LEGACY_LAYER_TYPES, modelType) ? LEGACY_LAYER_TYPES[modelType] : null;
    let types = dots3Types(config, rule);
    // Dots3 keys its rope parameters by the names it is given, then the base class renames the layers: a renamed
    // layer finds parameters only where a layer already had the new name
    const legacy = P.isList(types) ? P.sortedStrings([...new Set(types.filter((t) => typeof t === "string" &&
      has(LEGACY_NAMES, t) && !types.includes(LEGACY_NAMES[t])))]) : [];
    if (legacy.length) {
      throw valueError(`config['layer_types'] names ${repr(legacy[0])} layers, which model type ${repr(modelType)} cannot run: ` +
        `its config class keys the rope parameters by that name, then renames the layers ${repr(LEGACY_NAMES[legacy[0]])} ` +
        "(configuration_utils.py:514), and its rotary module finds no parameters for them (KeyError); name them as the class does");
    }
    const key = types !== null || has(config, "layer_types") ? "layer_types"
      : get(get(found, "attribute_map") || {}, "layer_types") ?? "layer_types";
    if (types === null) types = get(config, key);
    if (P.isList(types)) types = types.map((kind) => (typeof kind === "string" && has(LEGACY_NAMES, kind) ? LEGACY_NAMES[kind] : kind));
    if (types === null) return [config, found];
    if (rule !== null && P.isList(types) && types.includes(rule.old)) { // the old name's rope settings are the new one's
      found = copied(found);
      for (const name of P.keys(found)) {
        if (P.isMapping(found[name]) && !P.isList(found[name]) && has(found[name], rule.new)) {
          found[name] = copied(found[name]);
          P.setKey(found[name], rule.old, found[name][rule.new]);
        }
      }
    }
    const out = copied(config);
    P.setKey(out, key, types);
    return [out, found];
  }

  /** _dots3_types: the layer types a LEGACY_LAYER_TYPES class writes (null: none, or no rule). */
  function dots3Types(config, rule) {
    if (rule === null) return null;
    const useDsa = has(config, "use_dsa") ? config.use_dsa : has(config, "per_layer_config") ? null : true;
    const window = has(config, "use_sliding_window") ? config.use_sliding_window : true;
    for (const [key, value] of [["use_dsa", useDsa], ["use_sliding_window", window]]) { // null: None to the class too
      if (value !== null && !P.isBool(value)) {
        throw typeError(`config[${repr(key)}] must be true, false or null, got ${P.typeName(value)} ${P.reprCut(value, 40)}`);
      }
    }
    let types = get(config, "layer_types");
    const layers = get(config, "num_hidden_layers");
    if (types === null && layers !== null) {
      const count = Number(P.checkInt("config['num_hidden_layers']", layers, { minimum: 1, maximum: 2 ** 20 }));
      const full = useDsa === false ? rule.old : rule.new;
      types = [...Array(count).keys()].map((i) => (!window || i < 2 || i % 4 === 1 ? full : "sliding_attention"));
    }
    if (P.isList(types) && useDsa !== null) {
      const [before, after] = useDsa ? [rule.old, rule.new] : [rule.new, rule.old];
      types = types.map((kind) => (kind === before ? after : kind));
    }
    return types;
  }

  global.posencRopeTable = Object.freeze({ classLayerTypes,
    ATTENTION_LAYER_TYPES, NOT_ATTENTION_LAYER_TYPES, NOT_ATTENTION_ORDER, modelTypes, lookup, entry, textModelType, layoutOf, tableGet, field,
    defaultTheta, everyK, differs, pattern, givenList, windowTypes, windowOf, windowNotes, nopeSlidingTypes, layerKind,
    causalKeptNotes: W.causalKeptNotes,
  });
})(typeof window !== "undefined" ? window : globalThis);
