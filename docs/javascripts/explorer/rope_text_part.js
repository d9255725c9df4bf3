// A config's text part, as transformers' config classes find it: a port of the first part of
// posenc/configs/_params.py (the config as a mapping, a wrapper's language model in text_config or
// an encoder-decoder's decoder, the defaults a wrapper's class merges under it, and the keys its class
// drops from the top of a config without it). rope_params.js gathers it into window.posencRopeParams.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, get } = P;
  const { modelTypes, textModelType } = global.posencRopeTable;

  const MAX_NESTING = 100; // levels of dicts and lists a config may nest

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

  /** posenc.configs._params.TEXT_CONFIG_KEYS: where a wrapper keeps its language model's config. */
  const TEXT_CONFIG_KEYS = ["text_config", "decoder", "generator", "decoder_config"];

  /** _is_wrapper(modelType): whether its config class keeps the language model in a part (TEXT_CONFIG_KEYS). */
  function isWrapper(modelType) {
    return typeof modelType === "string" && P.truthy(get(get(modelTypes(), modelType) || {}, "text_model_type"));
  }

  /** _text_key(config): the key of a wrapper's language-model config (a dict there), or null. */
  function textKey(config) {
    if (!isWrapper(get(config, "model_type"))) return null;
    return TEXT_CONFIG_KEYS.find((key) => P.isMapping(get(config, key))) ?? null;
  }

  /** _params.wrapper_merges(): wrappers whose class merges its own defaults under a given text_config, with
   * those defaults (the table's text_config_merges). */
  function wrapperMerges() {
    return Object.fromEntries(P.keys(modelTypes()).map((name) => [name, get(get(modelTypes(), name), "text_config_merges")])
      .filter(([, merged]) => merged !== null));
  }

  /** _with_merged: a text_config with wrapperMerges()' defaults under it; a given rope_parameters' base wins over
   * a flat rope_theta (a merged one is dropped; a given one under merged rope_parameters is refused). */
  function withMerged(modelType, text) {
    const found = typeof modelType === "string" ? get(modelTypes(), modelType) : null;
    let merged = get(found || {}, "text_config_merges") || {};
    const params = get(text, "rope_parameters");
    if (P.isMapping(params) && get(params, "rope_theta") !== null) {
      merged = Object.fromEntries(Object.entries(merged).filter(([key]) => key !== "rope_theta"));
    }
    const theirs = get(get(merged, "rope_parameters") || {}, "rope_theta");
    const flat = get(text, "rope_theta");
    if (theirs !== null && !P.has(text, "rope_parameters") && flat !== null && !P.equal(flat, theirs)) {
      throw valueError(`model type ${repr(modelType)}: config['text_config']['rope_theta'] = ${repr(flat)} ` +
        `is not read (the config class merges its own rope_parameters, base ${repr(theirs)}, under ` +
        "the text_config, and their base wins): give it in config['text_config']['rope_parameters']");
    }
    return { ...merged, ...text };
  }

  /** _params.TOP_LEVEL_KEYS: the keys read_config reads from a text model's config. */
  const TOP_LEVEL_KEYS = ["rope_theta", "rope_parameters", "rope_scaling", "partial_rotary_factor", "hidden_size",
    "num_attention_heads", "head_dim", "max_position_embeddings", "num_hidden_layers", "layer_types",
    "sliding_window", "use_sliding_window", "max_window_layers", "attention_chunk_size",
    "no_rope_layers", "rope_interleave", "qk_rope_head_dim", "use_bidirectional_attention",
    "attn_temperature_tuning", "floor_scale", "attn_scale", "use_mem_rope", "layer_rope_theta"];

  /** _ignored: the keys a wrapper's class does not pass to its text model when the config has no text part
   * (TOP_LEVEL_KEYS not in the table's top_level_read; any other key where the class reads none of them). */
  function ignoredKeys(config) {
    const modelType = get(config, "model_type");
    if (!isWrapper(modelType) || textKey(config) !== null) return [];
    const read = get(get(modelTypes(), modelType), "top_level_read");
    const passed = (key) => (read || []).includes(key) || (read !== null && !TOP_LEVEL_KEYS.includes(key));
    // a null too: Gemma3Config(sliding_window=None) keeps its text model's 4096
    return P.keys(config).filter((key) => !passed(key) && key !== "model_type" && !TEXT_CONFIG_KEYS.includes(key));
  }

  /** refuse_ignored(config, read): refuse a key of ignoredKeys that changes read's answer (the reading, or its error). */
  function refuseIgnored(config, read) {
    const ignored = ignoredKeys(config);
    if (!ignored.length) return;
    const without = (drop) => Object.fromEntries(P.keys(config).filter((key) => !drop(key)).map((key) => [key, get(config, key)]));
    const kept = without((key) => ignored.includes(key));
    const [full, base] = [outcome(read, config), outcome(read, kept)];
    if (P.equal(full, base)) return;
    // the first key that changes the answer alone; else, for keys that act only together (a window and its
    // switch), the first whose removal changes it (find stops at the first found)
    const key = ignored.find((key) => !P.equal(outcome(read, { ...kept, [key]: get(config, key) }), base)) ??
      ignored.find((key) => !P.equal(outcome(read, without((k) => k === key)), full)) ?? ignored[0];
    throw valueError(`model type ${repr(get(config, "model_type"))}: config[${repr(key)}] = ${repr(get(config, key))} is ` +
      "not read (without a text_config the config class builds its text model from its own defaults and ignores it): " +
      "give it in the language model's part, config['text_config'] (or the 'decoder', 'generator' or 'decoder_config' " +
      "its class keeps)");
  }

  /** _outcome: read's answer, or its error as [type, message]. */
  function outcome(read, config) {
    try {
      return read(config);
    } catch (error) {
      if (!(error instanceof P.PyError)) throw error;
      return [error.name, error.message];
    }
  }

  /** _text_part(config): [model type, the language model's keys] (a wrapper's text_config, decoder, ...). */
  function textPart(config) {
    const modelType = get(config, "model_type");
    if (modelType !== null && typeof modelType !== "string") {
      throw typeError(`config['model_type'] must be a string, got ${P.typeName(modelType)}`);
    }
    const key = textKey(config);
    if (key === null || modelType === null) { // not a wrapper, or its language model not given as a dict
      const given = TEXT_CONFIG_KEYS.find((k) => get(config, k) !== null);
      if (given !== undefined && isWrapper(modelType)) {
        throw typeError(`config[${repr(given)}] must be a dict (the language model's config), got ${P.typeName(get(config, given))}`);
      }
      return [modelType, config];
    }
    const sets = modelType === "t5gemma" && key === "decoder" ? { is_decoder: true } : {}; // _params.WRAPPER_SETS
    const given = key === "text_config" ? withMerged(modelType, get(config, key)) : get(config, key);
    const text = { ...given, ...sets };
    const inner = get(text, "model_type");
    if (inner !== null && typeof inner !== "string") {
      throw typeError(`config[${repr(key)}]['model_type'] must be a string, got ${P.typeName(inner)}`);
    }
    return [textModelType(modelType, inner), text];
  }

  global.posencRopeTextPart = Object.freeze({
    MAX_NESTING, asMapping, tooDeep, TEXT_CONFIG_KEYS, isWrapper, textKey, wrapperMerges, withMerged, TOP_LEVEL_KEYS,
    refuseIgnored, textPart,
  });
})(typeof window !== "undefined" ? window : globalThis);
