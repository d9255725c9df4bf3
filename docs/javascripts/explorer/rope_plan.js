// Which kind of layer each layer of a model is, and whether its index lets it rotate: a port of
// posenc/configs/_plan.py layer_plan (the config's layer_types, or the types its class derives from
// other keys: Qwen2's max_window_layers, Llama 4's NoPE flags, SmolLM3's sliding NoPE layers, a fixed
// pattern; and each layer's NoPE flag), and whether a kind of layer rotates (posenc/configs/_reader.py
// _rotates, with _refusals.py's switched_off). Used by rope_config.js's readConfig.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const R = global.posencRopeParams;
  const { valueError, typeError, repr, get } = P;
  const { windowTypes, nopeSlidingTypes } = R;

  /** layer_plan: [the kind of each layer, whether each rotates by its index]. */
  function layerPlan(config, found, modelType, params) {
    needsGiven(config, found, modelType);
    let layers = R.tableGet(found, config, "num_hidden_layers");
    layers = layers !== null ? P.checkInt("config['num_hidden_layers']", layers, { minimum: 1, maximum: 2 ** 20 }) : 0;
    let types = R.tableGet(found, config, "layer_types");
    if (types !== null) {
      if (!P.isList(types) || !types.every((t) => typeof t === "string")) {
        throw typeError(`config['layer_types'] must be a list of strings, got ${P.reprCut(types, 80)}`);
      }
      types = R.givenList(found, modelType, "layer_types", [...types]); // Gemma 4 forces the last one
      types = counted(config, modelType, types, layers);
    } else if (P.truthy(get(found, "layer_types_computed"))) {
      types = [];
    } else if (layers && P.truthy(get(found, "window_layers"))) { // Qwen2: from max_window_layers on, once the window is on
      types = windowTypes(config, found, layers) || [];
    } else if (layers && P.truthy(get(found, "layer_types_from")) && P.truthy(get(config, found.layer_types_from.key))) {
      types = typesFromFlags(config, found.layer_types_from, layers); // Llama 4: from no_rope_layers
    } else if (layers && (P.has(found, "layer_pattern") || P.truthy(get(found, "layer_pattern_unknown")))) {
      types = P.has(found, "layer_pattern") ? R.pattern(found.layer_pattern, config, layers) : null;
      if (types === null && P.has(global.posencRopeData.nope_layers_slide, modelType)) { // SmolLM3 with its window on
        types = nopeSlidingTypes(config, modelType, nopeFlags(config, found, modelType, layers));
      }
      if (types === null) types = unknownPattern(found, modelType, params);
    } else {
      const named = [...params.keys()].filter((k) => k !== null);
      const kinds = named.length ? named : ["full_attention"];
      types = kinds.length === 1 ? new Array(layers).fill(kinds[0]) : [];
    }
    let flags = types.map(() => true);
    if ((get(found, "rope_condition") || []).includes("no_rope_layers")) {
      flags = nopeFlags(config, found, modelType, types.length) || flags;
    }
    if (typeof modelType === "string" && P.has(LAYER_THETAS, modelType) && types.length) {
      const byTheta = thetaFlags(config, modelType, types.length, params);
      flags = flags.map((flag, i) => flag && byTheta[i]);
    }
    scaledLayers(config, modelType, layers, params);
    return [types, flags];
  }

  // posenc/configs/_plan.py WRAPPER_TEXT_ROPE: wrappers whose class builds the text model with a base (and window)
  // of its own where the config gives no text_config
  const WRAPPER_TEXT_ROPE = {
    got_ocr2: "configuration_got_ocr2.py:91-110", pp_chart2table: "configuration_pp_chart2table.py:90-109",
    lighton_ocr: "configuration_lighton_ocr.py:69-85", mistral3: "configuration_mistral3.py:52-69",
    moss_transcribe_diarize: "configuration_moss_transcribe_diarize.py:98-108",
    voxtral: "configuration_voxtral.py:95-107", voxtral_realtime: "configuration_voxtral_realtime.py:150-166",
  };

  /** needs_given: refuse a wrapper without its text_config (WRAPPER_TEXT_ROPE), or no layer count where the class
   * derives the layers without RoPE from it (nope_pattern, layer_types_from, LAYER_THETAS' nope_every). */
  function needsGiven(config, found, modelType) {
    if (typeof modelType === "string" && P.has(WRAPPER_TEXT_ROPE, modelType)) {
      throw valueError(`model type ${repr(modelType)}: config needs 'text_config' (without it the config class ` +
        `builds the text model with a base and window of its own, ${WRAPPER_TEXT_ROPE[modelType]}, which posenc ` +
        "does not read)");
    }
    const text = typeof modelType === "string" ? R.textModelType(modelType) : null;
    const thetas = text !== null && P.has(LAYER_THETAS, text) ? LAYER_THETAS[text] : null;
    if (!(P.truthy(get(found, "nope_pattern")) || P.truthy(get(found, "layer_types_from")) ||
        (thetas !== null && P.truthy(thetas.nope_every)))) return;
    if (typeof modelType === "string" && P.truthy(get(R.lookup(modelType) || {}, "text_model_type"))) {
      // a wrapper without text_config: its class builds the text model with the text class's layer count
      throw valueError(`model type ${repr(modelType)}: config needs 'text_config' (its kinds of layer depend on ` +
        "the text model's layer count: without it the config class builds the text model with its default count " +
        "and fills in the layers without RoPE from it)");
    }
    if (R.tableGet(found, config, "num_hidden_layers") === null && R.tableGet(found, config, "layer_types") === null) {
      throw valueError(`model type ${repr(modelType)}: config needs 'num_hidden_layers' (its kinds of layer depend ` +
        "on it: the config class fills in the layers without RoPE from its layer count)");
    }
  }

  // posenc/configs/_plan.py SCALED_LAYERS: Molmo2 rotates the layers outside rope_scaling_layers without the scaling
  const SCALED_LAYERS = {
    molmo2_text: { key: "rope_scaling_layers", where: "modeling_molmo2.py:98-110, 660-663, 707-718" },
  };

  /** _scaled_layers: refuse a list that leaves out a layer under a scaling rule. */
  function scaledLayers(config, modelType, layers, params) {
    const rule = typeof modelType === "string" && P.has(SCALED_LAYERS, modelType) ? SCALED_LAYERS[modelType] : null;
    const given = rule !== null ? get(config, rule.key) : null;
    if (rule === null || given === null) return;
    const key = rule.key;
    if (!P.isList(given) || !given.every((i) => P.isInt(i))) {
      throw typeError(`config[${repr(key)}] must be a list of layer indices, got ${P.reprCut(given, 80)}`);
    }
    const kinds = [...params.values()].filter((p) => P.isMapping(p))
      .map((p) => (P.has(p, "rope_type") ? get(p, "rope_type") : get(p, "type")));
    if (kinds.every((kind) => kind === null || kind === "default")) return; // scaled and unscaled layers rotate alike
    const listed = new Set(given.map((i) => P.toNumber(i)));
    const leftOut = layers ? Array.from({ length: layers }, (_, i) => i).filter((i) => !listed.has(i)) : null;
    if (leftOut === null || leftOut.length) {
      const which = leftOut ? `leaves out layer ${leftOut[0]}` : "is given without config['num_hidden_layers']";
      throw valueError(`config[${repr(key)}] ${which}: transformers' code for model type ${repr(modelType)} rotates the ` +
        `layers outside it without the scaling rule (${rule.where}); posenc reads one scaling per kind of layer and ` +
        "does not read this config");
    }
  }

  // posenc/configs/_plan.py LAYER_THETAS: a base per layer, layer_rope_theta (0: NoPE); Muse's class fills it with 0
  // for every fourth layer from the last, Granite SWA's with the base (tests/test_rope_class_renames.py checks it)
  const LAYER_THETAS = {
    muse_spark_text: { nope_every: 4, bases: false, where: "modeling_muse_spark.py:662-663" },
    muse_glimmer_text: { nope_every: 4, bases: false, where: "modeling_muse_glimmer.py:511-512" },
    granite_swa: { nope_every: null, bases: true, where: "modeling_granite_swa.py:392-398, 453-455" },
    granitemoe_swa: { nope_every: null, bases: true, where: "modeling_granitemoe_swa.py:498-504, 559-561" },
  };

  /** nope_note: the note on layers whose index keeps them from rotating. */
  function nopeNote(config, modelType) {
    if (!(typeof modelType === "string" && P.has(LAYER_THETAS, modelType))) {
      return "no RoPE at these layers (config['no_rope_layers'])";
    }
    if (get(config, "layer_rope_theta") === null) {
      return "no RoPE at these layers (config['layer_rope_theta'], which the config class fills with 0, NoPE, for " +
        "every fourth layer counted from the last)";
    }
    return "no RoPE at these layers (config['layer_rope_theta'] is 0 there)";
  }

  /** _theta_flags: whether each layer rotates by layer_rope_theta; another base than the rope parameters' is refused. */
  function thetaFlags(config, modelType, count, params) {
    const rule = LAYER_THETAS[modelType];
    const given = get(config, "layer_rope_theta");
    if (given === null) {
      const every = rule.nope_every;
      return Array.from({ length: count }, (_, i) => !every || (count - 1 - i) % every !== 0);
    }
    if (!P.isList(given) || given.length !== count || !given.every((t) => P.isReal(t) && !P.isBool(t))) {
      throw valueError(`config['layer_rope_theta'] must be a list of ${count} numbers (a base per layer, 0: NoPE), ` +
        `got ${P.reprCut(given, 80)}`);
    }
    const flat = params.has(null) ? params.get(null) : null;
    const base = P.isMapping(flat) ? get(flat, "rope_theta") : null;
    const other = rule.bases ? given.find((t) => P.truthy(t) && !P.equal(t, base)) : undefined;
    if (other !== undefined) {
      throw valueError(`config['layer_rope_theta'] gives a layer the base ${repr(other)}, where the rope parameters' ` +
        `is ${repr(base)}: transformers' code for model type ${repr(modelType)} rotates each layer with its own base ` +
        `(${rule.where}); posenc reads one base per kind of layer and does not read this config`);
    }
    return given.map((t) => P.truthy(t));
  }

  // posenc/configs/_plan.py PADDED_LAYERS: Step 3.7 trims layer lists padded with num_nextn_predict_layers entries
  const PADDED_LAYERS = { step3p5: "num_nextn_predict_layers" };

  /** _counted: the given layer types as the class keeps them (PADDED_LAYERS: the padding trimmed), one per layer. */
  function counted(config, modelType, types, layers) {
    const pad = typeof modelType === "string" && P.has(PADDED_LAYERS, modelType) ? PADDED_LAYERS[modelType] : null;
    const extra = pad !== null ? get(config, pad) : null;
    if (P.isInt(extra) && P.toNumber(extra) > 0 && types.length === layers + P.toNumber(extra)) return types.slice(0, layers);
    if (layers && types.length !== layers) {
      throw valueError(`config['layer_types'] must have one entry per layer (${layers}, ` +
        `num_hidden_layers), got ${types.length}: ${P.reprCut(types, 80)}`);
    }
    return types;
  }

  /** Whether each of `count` layers rotates, from no_rope_layers or the class's rule (null: neither). */
  function nopeFlags(config, found, modelType, count) {
    let given = get(config, "no_rope_layers");
    if (given === null && P.has(found, "nope_pattern") && count) {
      given = R.pattern(found.nope_pattern, config, count);
      if (given === null) {
        throw valueError(`config needs 'no_rope_layers' for model type ${repr(modelType)}: its config class fills ` +
          "them from keys this config sets, by a rule posenc does not derive");
      }
    } else if (P.isList(given)) {
      given = R.givenList(found, modelType, "no_rope_layers", [...given]);
    }
    if (given === null) return null;
    if (!P.isList(given) || given.length !== count) {
      throw valueError(`config['no_rope_layers'] must be a list of ${count} flags (1: the layer rotates, ` +
        `0: NoPE), got ${P.reprCut(given, 80)}`);
    }
    return given.map(P.truthy);
  }

  /** The kind of each layer where the config class names it from the given NoPE flags (Llama 4). */
  function typesFromFlags(config, spec, layers) {
    const flags = config[spec.key];
    if (!P.isList(flags) || flags.length !== layers) {
      throw valueError(`config[${repr(spec.key)}] must be a list of ${layers} flags (1: the layer rotates, 0: NoPE), ` +
        `got ${P.reprCut(flags, 80)}`);
    }
    return flags.map((flag) => spec.kinds[P.truthy(flag) ? "1" : "0"]);
  }

  /** No layer types for a config whose class fills them by a rule posenc does not follow: an error
   * where the layer type decides the RoPE (one set per layer type, or only some kinds rotate). */
  function unknownPattern(found, modelType, params) {
    const conditions = get(found, "rope_condition") || [];
    if ([...params.keys()].some((k) => k !== null) || ["sliding_only", "sliding_or_no_window", "no_rope_layers"].some((c) => conditions.includes(c))) {
      throw valueError(`config needs 'layer_types' for model type ${repr(modelType)}: its config class fills them by a ` +
        "rule posenc does not derive (for this config), and its layers differ in RoPE by type");
    }
    return [];
  }

  /** _rotates (posenc/configs/_reader.py): [whether layers of this kind rotate (null: unknown), why not]. */
  function rotatesOf(config, found, layerType) {
    const conditions = get(found, "rope_condition") || [];
    if (R.NOT_ATTENTION_LAYER_TYPES.includes(layerType)) {
      return [false, `${layerType} layers are not attention and take no rotation: ${R.NOT_ATTENTION_ORDER[layerType]}`];
    }
    if (conditions.includes("sliding_only") && layerType !== "sliding_attention") {
      return [false, "only the sliding-window layers of this model type rotate (NoPE)"];
    }
    if (conditions.includes("sliding_or_no_window") && layerType !== "sliding_attention" &&
        R.field(found, config, "sliding_window") !== null) {
      return [false, "with a sliding window, only the sliding-window layers of this model type rotate (NoPE)"];
    }
    if (!R.ATTENTION_LAYER_TYPES.includes(layerType)) return [null, `posenc does not know what layers of type ${repr(layerType)} do`];
    if (conditions.includes("use_mem_rope")) { // Zamba2: `if self.config.use_mem_rope:` around the rotation
      // null is refused too: the class's strict field takes only true or false
      const on = P.has(config, "use_mem_rope") ? config.use_mem_rope : R.field(found, config, "use_mem_rope");
      if (!P.isBool(on)) throw typeError(`config['use_mem_rope'] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
      if (!on) return [false, "config['use_mem_rope'] is false: this model type's attention does not rotate (NoPE)"];
    }
    const off = switchedOff(config, found); // ESM's position_embedding_type
    if (off !== null) return [false, off];
    return [true, null];
  }

  // posenc/configs/_refusals.py's switched_off: why the layers do not rotate where a config key switches the
  // rotation (rope_switch: ESM's position_embedding_type), or null where it is on (or there is no switch).
  // posenc/configs/_refusals.py ROPE_SWITCHES: switches the table's generator does not find (Granite 4's)
  const ROPE_SWITCHES = {
    granitemoehybrid: { key: "position_embedding_type", rotary: "rope", absolute: null, default: null },
  };

  /** class_switches: the table entry with a ROPE_SWITCHES switch where the table has none. */
  function classSwitches(found, modelType) {
    const sw = typeof modelType === "string" && P.has(ROPE_SWITCHES, modelType) ? ROPE_SWITCHES[modelType] : null;
    if (sw === null || P.truthy(get(found, "rope_switch"))) return found;
    return { ...found, rope_switch: sw };
  }

  function switchedOff(config, found) {
    const sw = get(found, "rope_switch");
    if (!P.truthy(sw)) return null;
    const [key, rotary, absolute] = [get(sw, "key"), get(sw, "rotary"), get(sw, "absolute")];
    const value = P.has(config, key) ? get(config, key) : get(sw, "default");
    if (!P.isNone(value) && typeof value !== "string") {
      throw typeError(`config[${repr(key)}] must be a string such as ${repr(rotary)}` +
        `${P.truthy(absolute) ? ` or ${repr(absolute)}` : ""}, got ${P.typeName(value)} ${P.reprCut(value, 40)}`);
    }
    if (value === rotary) return null;
    if (absolute !== null && value === absolute) {
      return `config[${repr(key)}] is ${repr(value)}: this model type's attention does not rotate q and k (NoPE); its code ` +
        "adds learned absolute position embeddings to the token embeddings instead";
    }
    return `config[${repr(key)}] is ${repr(value)}: transformers' code for this model type rotates q and k only with ` +
      `${repr(rotary)}${P.truthy(absolute) ? ` and adds learned absolute position embeddings only with ${repr(absolute)}` : ""}` +
      `: with ${repr(value)} its layers get no position information`;
  }

  // posenc/configs/_plan.py LEGACY_LAYER_KEYS: a legacy key the class maps onto layer_types (Granite 4's)
  const LEGACY_LAYER_KEYS = { granitemoehybrid: "layers_block_type" };

  /** legacy_layer_key: the config with a LEGACY_LAYER_KEYS list stored as layer_types, as the class stores it. */
  function legacyLayerKey(config, modelType) {
    const legacy = typeof modelType === "string" && P.has(LEGACY_LAYER_KEYS, modelType) ? LEGACY_LAYER_KEYS[modelType] : null;
    if (legacy === null || get(config, legacy) === null) return config;
    return { ...config, layer_types: config[legacy] };
  }

  global.posencRopePlan = Object.freeze({ ...global.posencRopeClassRope, layerPlan, rotatesOf, nopeNote, legacyLayerKey,
    LEGACY_LAYER_KEYS, PADDED_LAYERS, classSwitches, ROPE_SWITCHES, LAYER_THETAS, SCALED_LAYERS, WRAPPER_TEXT_ROPE });
})(typeof window !== "undefined" ? window : globalThis);
