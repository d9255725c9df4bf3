// A model's RoPE read from its config.json: a port of posenc/configs/_reader.py (read_config,
// from_config, query_temperature; the layer plan is rope_plan.js) and of the warnings of
// posenc/inspect.py (warnings_for).
// Results have posenc's field names; None is null. A ConfigRope is
//   {model_type, layers: {name: LayerRope}, pattern, max_position_embeddings,
//    original_max_position_embeddings, notes, sinks}
// and a LayerRope {layer_type, rotates, dim, rotary_dim, layout, base, scaling, attention_factor,
//   temperature, softmax_scale, window, layers, note}.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const S = global.posencRopeScaling;
  const R = global.posencRopeParams;
  const { valueError, typeError, repr, get } = P;
  const LAYOUTS = ["half", "interleaved"];

  const { layerRope, siteNotes, readDeepseekV4, windowOf, windowNotes } = R;

  /** LayerRope.rotary_kwargs(): the keyword arguments of RotaryEmbedding for these layers. */
  function rotaryKwargs(layer) {
    if (!layer.rotates || layer.dim === null) {
      throw valueError(`layers of type ${repr(layer.layer_type)} use no RoPE${P.truthy(layer.note) ? ` (${layer.note})` : ""}`);
    }
    return { dim: layer.dim, base: layer.base, layout: layer.layout, scaling: layer.scaling,
      rotary_dim: P.equal(layer.rotary_dim, layer.dim) ? null : layer.rotary_dim };
  }

  /** query_temperature(temperature, position): the factor on the query at `position` (0-based). */
  function queryTemperature(temperature, position) {
    position = P.checkInt("position", position, { minimum: 0, maximum: R.MAX_LENGTH });
    if (P.isNone(temperature)) return 1.0;
    if (!P.isMapping(temperature)) {
      throw typeError(`temperature must be a dict (LayerRope.temperature) or None, got ${P.typeName(temperature)}`);
    }
    const rule = P.checkChoice("temperature['rule']", get(temperature, "rule"), ["llama_4_scaling_beta", "llama4_nope_tuning"]);
    if (rule === "llama_4_scaling_beta") {
      const beta = P.checkFloat("temperature['beta']", get(temperature, "beta"), { minimum: 0.0, maximum: 1e6 });
      const length = P.checkInt("temperature['length']", get(temperature, "length"), { minimum: 1, maximum: R.MAX_LENGTH });
      return 1.0 + beta * Math.log(1 + quotient(position, length));
    }
    const scale = P.checkFloat("temperature['attn_scale']", get(temperature, "attn_scale"), { minimum: 0.0, maximum: 1e6 });
    const floor = P.checkInt("temperature['floor_scale']", get(temperature, "floor_scale"), { minimum: 1, maximum: R.MAX_LENGTH });
    return scale * Math.log1p(quotient(position + 1, floor)) + 1.0;
  }

  // Python's a // b of two non-negative ints, exact past 2^53 / b
  const quotient = (a, b) => Number(BigInt(a) / BigInt(b));

  // posenc/configs/_refusals.py's theta_only: the config without the rope_parameters and rope_scaling a rotary
  // module that reads only the top-level rope_theta ignores (ESM's), each named in notes.
  function thetaOnly(config, found, notes) {
    if (!P.truthy(get(found, "theta_only"))) return config;
    const ignored = ["rope_parameters", "rope_scaling"].filter((key) => !P.isNone(get(config, key)));
    if (!ignored.length) return config;
    notes.push("transformers' code for this model type reads only config['rope_theta'] (the default rule, no " +
      `scaling): it ignores ${ignored.map((key) => `config[${repr(key)}]`).join(", ")}`);
    const out = {};
    for (const k of P.keys(config)) if (!ignored.includes(k)) P.setKey(out, k, get(config, k));
    return out;
  }

  // posenc/configs/_refusals.py's _head_slice: a rotation of a slice of the heads (Qwen2.5-Omni's DiT).
  function headSlice(modelType, heads) {
    const [attention, sliced, through] = [get(heads, "attention"), get(heads, "sliced"), get(heads, "through") || []];
    const count = /^\w+\[:, :(\d+)\](, \w+\[:, :\1\])*$/.exec(sliced);
    const which = count === null ? "" : " (q and k are [batch, heads, positions, features] there: its first " +
      `${count[1] === "1" ? "head" : `${count[1]} heads`})`;
    const before = through.length ? `, after ${through.join(" and ")} reorders their features` : "";
    return `model type ${repr(modelType)}: its attention (${attention}) rotates only ${sliced}${which}${before}; the other ` +
      "heads take no rotation: posenc reads one rotation for all the heads of a layer, which cannot express that";
  }

  /** _part_notes(config): which part of an encoder-decoder config was read (T5Gemma 2: its decoder). */
  function partNotes(config) {
    const key = R.textKey(config);
    if (key === null || key === "text_config") return [];
    const encoder = { decoder: "encoder", decoder_config: "encoder_config" }[key];
    const other = encoder && P.isMapping(get(config, encoder))
      ? `; its encoder, config[${repr(encoder)}], is read when given on its own` : "";
    return [`read: config[${repr(key)}], the language model transformers' get_text_config(decoder=True) returns${other}`];
  }

  /** posenc.configs._divergences.divergence_notes: transformers' departures from the published model. */
  function divergenceNotes(modelType, config) {
    const register = (global.posencRopeData && global.posencRopeData.divergences) || [];
    // `when`: [key, value] pairs that must all hold exactly (true, false, a string, or null for absent)
    return register.filter((d) => d.model_type === modelType && get(config, d.key) !== null &&
      (d.when || []).every(([key, value]) => get(config, key) === value)).map((d) =>
      `config[${repr(d.key)}] = ${repr(get(config, d.key))}: transformers departs from the published model here. ` +
      `Published: ${d.published}. transformers (what posenc reads): ${d.transformers}`);
  }

  // posenc/configs/_layer.py _mrope_fit: M-RoPE sections transformers' rotary module fails on are refused.
  function mropeFit(found, params, width, modelType) {
    const demand = get(found, "mrope_sections");
    if (!P.truthy(demand)) return;
    const name = "config['rope_parameters']['mrope_section']";
    const absent = !P.has(params, "mrope_section");
    const sections = absent ? get(demand, "default") : P.get(params, "mrope_section");
    if (P.isNone(sections)) {
      throw valueError(`${name} is needed for model type ${repr(modelType)}: transformers' rotary module for it splits ` +
        `the frequencies by these M-RoPE sections${absent ? " and has no default" : ""}`);
    }
    if (!P.isList(sections) || !sections.every((s) => P.isInt(s) && s >= 0)) {
      throw typeError(`${name} must be a list of integers >= 0, got ${P.reprCut(sections, 60)}`);
    }
    const half = Math.floor(width / 2);
    if (get(demand, "sum") && sections.reduce((a, b) => a + Number(b), 0) !== half) {
      const given = absent ? `the sections transformers' rotary module uses without ${name} (${repr(sections)})`
        : `${name} (${repr(sections)})`;
      throw valueError(`${given} must sum to ${half}, the number of frequencies of the rotated width ${width}: ` +
        `transformers' rotary module for model type ${repr(modelType)} splits them by these sections and fails otherwise`);
    }
    R.mropePaired(found, params, modelType); // Ernie 4.5 VL: three sections, h == w, t > 0
  }

  function layerOf(config, found, modelType, name, params, rotates, note, layout, layers, defaulted = null) {
    const [window, sides] = windowOf(config, found, name, modelType);
    if (rotates && params === null) [rotates, note] = [false, `config['rope_parameters'][${repr(name)}] is None (NoPE)`];
    if (!rotates || params === null) {
      return layerRope(name, rotates, { temperature: R.temperatureOf(config, found, params, false), window, layers, note,
        window_sides: sides });
    }
    const dim = R.headDim(config, found, name, defaulted);
    const width = params.rope_type === "proportional" ? dim : R.rotaryWidth(config, found, params, dim, modelType, name);
    mropeFit(found, params, width, modelType); // GLM-4V's and Qwen2-VL's split fails on sections that do not fit
    const base = P.checkFloat("rope_theta", params.rope_theta, { positive: true });
    const scaling = R.scalingOf(config, found, params);
    return layerRope(name, true, { dim, rotary_dim: width, layout, base, scaling,
      attention_factor: S.ropeAttentionScaling(scaling), temperature: R.temperatureOf(config, found, params, true),
      softmax_scale: R.softmaxScale(found, params), window, layers, note, window_sides: sides });
  }

  // Beam: its config class sets rope_parameters[layer_type] = null for NoPE layer types, and its model
  // passes those layers no position embeddings; other classes fill a null in or fail on it.
  function nullIsNope(found) {
    const defaults = get(found, "default_rope_parameters");
    return P.truthy(defaults) && P.keys(defaults).some((k) => P.get(defaults, k) === null);
  }

  // posenc/configs/_vision_refused.py's refusal(model_type): why a vision or video part is not read
  // ("" where it is not listed), from the vision tables hooks/rope_data.py ships.
  function visionRefusal(modelType) {
    const shipped = global.posencRopeData && global.posencRopeData.vision;
    if (!shipped || typeof modelType !== "string") return "";
    const refused = get(global.posencJSON.parseJSON(shipped), "refused") || {};
    return P.has(refused, modelType) ? P.get(refused, modelType) : "";
  }

  /** read_config(config, layout=layout): what every kind of layer does with positions. */
  function readConfig(config, layout = null) {
    config = R.asMapping(config);
    const given = P.isNone(layout) ? null : P.checkChoice("layout", layout, LAYOUTS);
    const own = get(config, "model_type"); // first: the config's own type (SAM 3's table entry names its CLIP text model)
    if (typeof own === "string" && (global.posencRopeData.vision_encoders || []).includes(own)) {
      throw valueError(`model type ${repr(own)}: a vision or video encoder that rotates over patches in 2-D or 3-D; ` +
        "posenc.configs.vision.read_vision_config reads it (axes, sections, coordinates, base, layout); read_config and " +
        "from_config read 1-D RoPE");
    }
    R.refuseIgnored(config, (kept) => readPart(kept, given)); // a wrapper without its text part: what its class drops
    return readPart(config, given);
  }

  /** _read(config, given): readConfig after the checks on the whole config. */
  function readPart(config, given) {
    const own = get(config, "model_type");
    const [modelType, given0] = R.textPart(config);
    const legacy = global.posencRopePlan.legacyLayerKey(given0, modelType); // Granite 4's layers_block_type
    const [rewritten, entry] = R.classLayerTypes(legacy, (modelType !== null ? R.entry(modelType) : null) || {}, modelType);
    const found = global.posencRopePlan.classSwitches(entry, modelType); // Granite 4's position_embedding_type
    let text = R.classNames(R.classLength(rewritten, modelType), found, modelType); // Zamba2's use_long_context;
    // HunYuan-VL's attention_head_dim for head_dim (class_names)
    text = global.posencRopePlan.classRope(text, modelType); // HunYuan-VL's xdrope_section and rope type 'xdrope'
    global.posencRopePlan.classRopeTypes(text, modelType); // Phi-3's, Cosmos3 Edge's and PhiMoE's refused rope types
    if (modelType === "deepseek_v4") return readDeepseekV4(text, given); // rope parameters keyed by rope kind
    if (get(found, "rope") === false && P.truthy(get(found, "rotates_elsewhere"))) { // GLM-5-Next's text model
      // a multimodal parent's vision tower may still rotate: it is not said to use no RoPE
      const wrapper = typeof own === "string" ? get(R.lookup(own) || {}, "text_model_type") : null;
      const what = P.truthy(wrapper) ? `model type ${repr(own)}: its language model (${repr(wrapper)}) does not rotate q and k`
        : `model type ${repr(modelType)} uses no rotary position embedding`;
      const built = `no module of the model transformers builds from ${P.truthy(wrapper) ? "its text config" : "it"} rotates`;
      const off = get(found, "rotation_off"); // Moshi's depth decoder: MoshiAttention built with rotary_emb None
      if (P.truthy(off)) {
        const switched = P.keys(off).map((name) => `${name} with self.${get(off, name)} None`).join(", ");
        throw valueError(`${what}: ${built}: it builds ${switched}, which skips the rotation (the other models of its ` +
          `modeling file build them with it on)${visionRefusal(modelType)}`);
      }
      throw valueError(`${what}: ${built}; the rotation in its modeling file is other classes' ` +
        `(${found.rotates_elsewhere.join(", ")})${visionRefusal(modelType)}`);
    }
    if (get(found, "rope") === false && P.truthy(get(found, "rope_parameters_given_only"))) { // Cohere Compass's text
      throw valueError(`model type ${repr(modelType)}: its attention rotates q and k with the rope_parameters a config ` +
        "gives, and its config class fills none (an empty rope_parameters at its defaults, where posenc's table is " +
        "derived): posenc does not read it yet");
    }
    if (get(found, "rope") === false && P.truthy(get(found, "rotation_calls"))) {
      throw valueError(`model type ${repr(modelType)}: posenc does not read its rotary position embedding from a config ` +
        `(transformers' modeling file for it calls ${found.rotation_calls.join(", ")}: this model type, or another model ` +
        `of the same file, rotates q and k; vision, audio and video encoders are not read yet)${visionRefusal(modelType)}`);
    }
    const ownParts = get(R.lookup(own) || {}, "rotating_parts"); // the config's own type, not its text model's
    const parts = P.truthy(ownParts) ? ownParts : get(found, "rotating_parts");
    if (P.truthy(parts)) {
      throw valueError(`model type ${repr(P.truthy(own) ? own : modelType)}: its own code does not rotate, but its parts ` +
        `do (${P.keys(parts).map((key) => `${key}: ${parts[key]}`).join("; ")}): read those sub-configs`);
    }
    if (get(found, "rope") === false) {
      throw valueError(`model type ${repr(modelType)} uses no rotary position embedding (transformers' code for it ` +
        "has no RoPE): from_config reads RoPE settings only");
    }
    const backward = get(found, "turns_backward"); // NanoChat: rotate_half with both signs flipped
    if (P.truthy(backward)) {
      throw valueError(`model type ${repr(modelType)}: transformers' code for it turns each pair of the ${repr(backward)} ` +
        "layout the other way, by -m theta at position m where RoPE turns by +m theta (found by running its rotary " +
        "module and rotation function): posenc's rotation does not express that, in either layout");
    }
    const heads = get(found, "head_slice"); // Qwen2.5-Omni's DiT: its first head only
    if (P.truthy(heads)) throw valueError(headSlice(modelType, heads));
    const flag = get(found, "rotates_values"); // RoFormer's rotary_value
    if (P.truthy(flag)) {
      const key = get(flag, "key");
      const on = P.has(text, key) ? get(text, key) : get(flag, "default");
      if (!P.isBool(on)) throw typeError(`config[${repr(key)}] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
      if (on) {
        throw valueError(`config[${repr(key)}] is true: transformers' code for model type ${repr(modelType)} then ` +
          "rotates the values as well as q and k, by the same angles at each token's own position " +
          "(apply_rotary_position_embeddings with value_layer), so the attention's output carries " +
          `absolute positions; posenc's RoPE rotates q and k only and reads this model type with ${key} false`);
      }
    }
    if ((get(found, "rope_condition") || []).includes("no_alibi") && get(text, "alibi") === true) {
      throw valueError(`config['alibi'] is true: this ${P.str(modelType)} model uses ALiBi, not RoPE`);
    }
    const chosen = R.layoutFor(text, found, modelType, given);
    const declared = R.tableGet(found, text, "layer_types");
    const notes = [...(get(found, "notes") || [])];
    text = thetaOnly(text, found, notes); // ESM: rope_parameters and rope_scaling are not read
    const params = R.parameters(text, found, iterate(P.truthy(declared) ? declared : []).filter((t) => typeof t === "string"),
      notes);
    const [types, flags] = global.posencRopePlan.layerPlan(text, found, modelType, params);
    let kinds = new Map();
    types.forEach((layerType, index) => {
      const name = flags[index] ? layerType : `${layerType}:nope`;
      if (!kinds.has(name)) kinds.set(name, []);
      kinds.get(name).push(index);
    });
    if (!kinds.size) {
      const named = [...params.keys()].filter((k) => k !== null);
      kinds = new Map((named.length ? named : ["full_attention"]).map((k) => [k, []]));
    }
    const strip = (name) => (name.endsWith(":nope") ? name.slice(0, -5) : name);
    // a layer type whose layers all skip RoPE keeps its own name
    kinds = new Map([...kinds].map(([name, indices]) => [!kinds.has(strip(name)) ? strip(name) : name, indices]));
    const layers = {};
    const defaulted = []; // head sizes taken from the class defaults
    for (const [name, indices] of kinds) {
      const layerType = strip(name);
      let [rotates, note] = global.posencRopePlan.rotatesOf(text, found, R.layerKind(modelType, layerType));
      if (name.endsWith(":nope") || (indices.length && !flags[indices[0]])) {
        [rotates, note] = [false, global.posencRopePlan.nopeNote(text, modelType)];
      }
      if (rotates && !params.has(layerType) && !params.has(null)) {
        throw valueError(`config['rope_parameters'] has no entry for layer type ${repr(layerType)} (it has ` +
          `${[...params.keys()].map(repr).join(", ")})`);
      }
      const kindParams = params.has(layerType) ? params.get(layerType) : params.has(null) ? params.get(null) : null;
      if (rotates && kindParams === null && P.truthy(found) && !nullIsNope(found)) {
        throw valueError(`config['rope_parameters'][${repr(layerType)}] is None, which transformers' code for model type ` +
          `${repr(modelType)} does not run as layers without RoPE (only model types whose config class marks NoPE ` +
          "layers with None do, such as 'beam'); give its parameters");
      }
      P.setKey(layers, name, layerOf(text, found, modelType, name, kindParams, rotates, note, chosen, indices,
        defaulted));
    }
    global.posencRopePlan.indexerFit(text, modelType, Object.values(layers).filter((l) => l.rotary_dim !== null)
      .map((l) => P.toNumber(l.rotary_dim))); // Qwen4-Exp
    const originals = Object.values(layers).filter((l) => P.truthy(l.scaling) && P.has(l.scaling, "original_max_position_embeddings")
      && l.scaling.type !== "dynamic").map((l) => l.scaling.original_max_position_embeddings);
    if ([...params.values()].some((p) => P.isMapping(p) && P.has(p, "mrope_section"))) {
      notes.push("M-RoPE (mrope_section): a text token has the same position on all three axes, so text rotates as " +
        "the 1-D RoPE given here; image and video tokens get 3-D positions");
    }
    notes.push(...R.defaultsNote(found, modelType, defaulted));
    notes.push(...windowNotes(text, found, modelType, types), ...R.causalKeptNotes(text, modelType));
    notes.push(...global.posencRopeTwoWay.partNotes(text, modelType)); // T5Gemma's module config without is_decoder
    notes.push(...divergenceNotes(modelType, text), ...siteNotes(modelType, found, chosen), ...partNotes(config));
    const pattern = [];
    for (const [name, indices] of kinds) for (const i of indices) pattern[i] = name;
    return { model_type: modelType, layers, pattern: pattern.filter((n) => n !== undefined),
      max_position_embeddings: R.contextLength(text, found),
      original_max_position_embeddings: originals.length ? originals[0] : null, notes,
      sinks: P.truthy(get(found, "attention_sinks")) };
  }

  /** Python's iteration over a value (a string gives its characters, a dict its keys). */
  function iterate(value) {
    if (P.isList(value)) return value;
    if (typeof value === "string") return P.codePoints(value);
    if (P.isMapping(value)) return P.keys(value);
    throw typeError(`'${P.typeName(value)}' object is not iterable`);
  }

  /** from_config(config, layer_type, layout=layout): the keyword arguments of RotaryEmbedding. */
  function fromConfig(config, layerType = null, layout = null) {
    if (!P.isNone(layerType) && typeof layerType !== "string") {
      throw typeError(`layer_type must be a string or None, got ${P.typeName(layerType)}`);
    }
    const { layers } = readConfig(config, layout);
    const names = Object.keys(layers);
    if (!P.isNone(layerType)) {
      if (!names.includes(layerType)) {
        throw valueError(`layer_type must be one of ${names.map(repr).join(", ")} (the layer types of this config), ` +
          `got ${repr(layerType)}`);
      }
      return rotaryKwargs(layers[layerType]);
    }
    const rotating = new Map();
    for (const layer of Object.values(layers)) if (layer.rotates) rotating.set(reprKwargs(rotaryKwargs(layer)), layer);
    if (rotating.size === 1) return rotaryKwargs([...rotating.values()][0]);
    if (!rotating.size) {
      throw valueError("no layer of this config uses RoPE: " + names.map((n) => `${n}: ${P.str(layers[n].note)}`).join("; "));
    }
    throw valueError(`this config has more than one RoPE: pass layer_type, one of ${P.sortedStrings(names).map(repr).join(", ")}, ` +
      "got layer_type=None");
  }

  // repr() of the kwargs, as posenc compares them (base is a float)
  const reprKwargs = (k) => `${k.dim}|${P.reprFloat(k.base)}|${k.layout}|${repr(k.scaling)}|${repr(k.rotary_dim)}`;

  // ---- posenc/inspect.py: the wavelengths and the warnings ------------------------------------------
  /** Positions per full turn of each rotating pair (pairs that never turn are left out). */
  function wavelengths(layer, length) {
    const theta = S.ropeInverseFrequencies(P.truthy(layer.dim) ? layer.dim : 2, P.truthy(layer.base) ? layer.base : 10000.0,
      layer.scaling, length, rotaryKwargs(layer).rotary_dim);
    return theta.filter((t) => t > 0).map((t) => (2 * Math.PI) / t);
  }

  const fmt = (value) => (value < 1e7 ? P.formatFixed(value, 0, true) : P.formatGeneral(value, 3));

  /** warnings_for(rope, length, config): the warnings of `python -m posenc.inspect`. */
  function warningsFor(rope, length = null, config = null) {
    if (!P.isNone(length)) length = P.checkInt("length", length, { minimum: 1, maximum: 2 ** 53 });
    else length = null;
    const found = [];
    const rotating = Object.values(rope.layers).filter((layer) => layer.rotates);
    if (rotating.some((l) => P.truthy(l.scaling) && l.scaling.type === "yarn")) {
      // a fact for every model; the advice is Qwen's own (posenc/inspect.py warnings_for)
      const advice = String(rope.model_type || "").startsWith("qwen")
        ? "; Qwen's guide advises adding this rope_scaling only when long inputs need it" : "";
      found.push("static YaRN: the frequencies are stretched at every length, short inputs included (transformers " +
        `computes them once, from the config)${advice}`);
    }
    for (const layer of rotating) {
      // p-RoPE keeps its slow pairs still on purpose; the turning ones are fast by design
      if (P.truthy(layer.scaling) && layer.scaling.type === "proportional") continue;
      // a window of 0: the query alone; a window past the context: the context
      const reach = [length, rope.max_position_embeddings].find(P.truthy) ?? null;
      const context = layer.window === null ? reach : P.truthy(reach) ? Math.min(layer.window, reach) : layer.window;
      // a rule that depends on the length (LongRoPE's long factors, dynamic NTK) is judged at the frequencies of
      // the length judged, not at those of short inputs
      const depends = P.truthy(layer.scaling) && ["dynamic", "longrope"].includes(layer.scaling.type);
      const waves = wavelengths(layer, depends && P.truthy(reach) ? reach : length);
      if (P.truthy(context) && waves.length && Math.max(...waves) < context) {
        found.push(`${layer.layer_type}: the base ${P.formatGeneral(layer.base)} is too small for ${P.formatInt(context)} ` +
          `positions: even the slowest pair turns every ${fmt(Math.max(...waves))}, so every angle repeats within the context`);
      }
    }
    if (length && rope.max_position_embeddings && length > rope.max_position_embeddings) {
      found.push(`--length ${P.formatInt(length)} is past the ${P.formatInt(rope.max_position_embeddings)} positions the ` +
        "config declares");
    }
    if (rotating.some((l) => P.truthy(l.scaling) && ["dynamic", "longrope"].includes(l.scaling.type))) {
      found.push("the frequencies depend on the sequence length (dynamic NTK or LongRoPE): a KV cache rotated at one " +
        "length does not match queries rotated at another");
    }
    const spec = P.truthy(rope.model_type) ? get(R.entry(rope.model_type) || {}, "layout") : null;
    if (P.isMapping(spec) && config !== null && get(config, spec.key) === null) {
      const chosen = spec.default ? spec.true : spec.false;
      found.push(`the config has no ${repr(spec.key)}: transformers' default (${String(spec.default).toLowerCase()}) ` +
        `pairs the features ${P.str(chosen)}; a checkpoint converted for the other layout rotates wrongly without any error`);
    }
    return found.concat(rope.notes);
  }

  global.posencRopeConfig = Object.freeze({ LAYOUTS, readConfig, fromConfig, rotaryKwargs, queryTemperature, wavelengths,
    warningsFor });
})(typeof window !== "undefined" ? window : globalThis);
