// Which layers see the tokens after the query too, as posenc/configs/_two_way.py reads it: the encoders
// whose windows reach both ways or are centred on the query, the flags that open a decoder's masks both ways
// (BIDIRECTIONAL) or keep them causal (CAUSAL_KEPT), and a config's own is_causal. Used by rope_table.js.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, get, has } = P;

  // posenc/configs/_two_way.py PARTS: one module config for an encoder and a decoder, told apart by a flag (T5Gemma)
  const PARTS = { t5_gemma_module: { key: "is_decoder", default: false, where: "modeling_t5gemma.py:670-672" } };

  /** encoder_part: whether the config is the encoder of a PARTS model type (its flag false, or left at the default). */
  function encoderPart(config, modelType) {
    const rule = typeof modelType === "string" && has(PARTS, modelType) ? PARTS[modelType] : null;
    if (rule === null || config === null) return false;
    const on = has(config, rule.key) ? config[rule.key] : rule.default;
    if (!P.isBool(on)) {
      throw typeError(`config[${repr(rule.key)}] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
    }
    return !on;
  }

  /** The encoders whose windows reach both ways (posenc.configs._two_way.TWO_SIDED, served as data), or the
   * encoder part's rule (two_sided; without a config, TWO_SIDED's alone). */
  function twoSided(modelType, config = null) {
    if (encoderPart(config, modelType)) return { where: PARTS[modelType].where };
    return typeof modelType === "string" ? get(global.posencRopeData.two_sided, modelType) : null;
  }

  /** part_notes: which stack a PARTS config given without its flag is read as. */
  function partNotes(config, modelType) {
    const rule = typeof modelType === "string" && has(PARTS, modelType) ? PARTS[modelType] : null;
    if (rule === null || has(config, rule.key)) return [];
    return [`config[${repr(rule.key)}] is not given: read at the config class's default (${String(rule.default)}), ` +
      `the encoder, whose layers see both ways (${rule.where}); a whole config gives its decoder true`];
  }

  /** The encoders whose windows are centred on the query (posenc.configs._two_way.CENTRED: T5Gemma2's). */
  const centred = (modelType) => typeof modelType === "string" && has(global.posencRopeData.centred, modelType);

  // posenc/configs/_two_way.py ENCODERS: model types whose modeling file builds only bidirectional masks, no window
  // (tests/test_explorer_ports.py checks the list against Python's)
  const ENCODERS = ["esmc", "eurobert", "gte", "jina_embeddings_v3", "lasr_encoder", "nemotron3_diarization_audio",
    "neucodec", "nomic_bert", "pe_audio_encoder", "pe_audio_video_encoder", "pe_video_encoder",
    "dia_encoder", "nemotron3_5_transcribe_asr_audio", "nemotron3_5_transcribe_word_timestamp"];

  // posenc/configs/_two_way.py DECODER_SWITCH: the causal mask only with config['is_decoder'] true (ESM, RoFormer)
  const DECODER_SWITCH = { esm: "is_decoder", roformer: "is_decoder" };

  /** posenc/configs/_two_way.py _encoder: whether every layer sees both ways whatever is_causal says. */
  function encoder(config, modelType) {
    const key = typeof modelType === "string" && has(DECODER_SWITCH, modelType) ? DECODER_SWITCH[modelType] : null;
    if (key !== null) {
      const on = get(config, key);
      if (on !== null && !P.isBool(on)) {
        throw typeError(`config[${repr(key)}] must be true, false or null, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
      }
      if (!on) return true;
    }
    return centred(modelType) || twoSided(modelType) !== null || (typeof modelType === "string" && ENCODERS.includes(modelType)) ||
      encoderPart(config, modelType);
  }

  /** A flag's value as a config.json writes it (posenc/configs/_two_way.py _json). */
  const asJson = (v) => (v === null ? "null" : P.isBool(v) ? String(v) : repr(v));
  const sameValue = (a, b) => (a === null ? b === null : P.isBool(a) ? b === a : typeof a === "string" && a === b);
  const sameType = (a, b) => (a === null ? b === null : P.isBool(a) ? P.isBool(b) : typeof a === "string" && typeof b === "string");

  /** posenc/configs/_two_way.py bidirectional: BIDIRECTIONAL's rule where the config turns its flag on, else null. */
  function bidirectional(config, modelType) {
    const rule = typeof modelType === "string" ? get(global.posencRopeData.bidirectional, modelType) : null;
    if (rule === null) return null;
    const on = get(config, rule.key);
    if (!rule.allowed.some((value) => sameValue(value, on))) {
      const message = `config[${repr(rule.key)}] must be one of ${rule.allowed.map(asJson).join(", ")}, got ` +
        `${P.typeName(on)} ${P.reprCut(on, 40)}`;
      throw rule.allowed.some((value) => sameType(value, on)) ? valueError(message) : typeError(message);
    }
    return sameValue(rule.on, on) ? rule : null;
  }

  /** posenc/configs/_two_way.py causal_kept_notes: Gemma's and Gemma 2's flag keeps the causal mask (CAUSAL_KEPT). */
  function causalKeptNotes(config, modelType) {
    const key = typeof modelType === "string" ? get(global.posencRopeData.causal_kept, modelType) : null;
    const on = key === null ? null : get(config, key);
    if (on !== null && !P.isBool(on)) {
      throw typeError(`config[${repr(key)}] must be one of true, false, null, got ${P.typeName(on)} ${P.reprCut(on, 40)}`);
    }
    if (on !== true || notCausal(config, modelType)) return []; // config['is_causal'] false opens the mask itself
    return [`config[${repr(key)}] is true, but transformers' code for this model type keeps building the causal mask and ` +
      "only sets its attention's is_causal to false: eager attention stays causal (as read here), while an " +
      "implementation that skips the mask runs both ways (Gemma's sdpa on a batch without padding)"];
  }

  /** posenc/configs/_two_way.py not_causal: whether the config's own is_causal (false) opens the causal masks. */
  function notCausal(config, modelType) {
    if (!has(config, "is_causal")) return false;
    const on = config.is_causal;
    if (!P.isBool(on)) {
      throw typeError(`config['is_causal'] must be true or false, got ${P.typeName(on)} ${P.reprCut(on, 40)} ` +
        "(transformers tests it for truth: null would open the masks both ways)");
    }
    return !on && !encoder(config, modelType);
  }

  /** posenc/configs/_two_way.py sides_of_full: the sides a layer with no window sees. */
  function sidesOfFull(config, modelType) {
    if (encoder(config, modelType) || notCausal(config, modelType)) return "both";
    return bidirectional(config, modelType) !== null ? "both" : "before";
  }

  /** posenc/configs/_two_way.py _opened: the tokens on each side in a sliding layer that a BIDIRECTIONAL rule opens. */
  function opened(window, rule, openMask) {
    const afterClass = rule.halves ? Number(P.big(window) / 2n) + 1 : Number(window);
    return rule.sets_is_causal || openMask ? afterClass : afterClass - 1;
  }

  /** posenc/configs/_two_way.py is_causal_notes: what a config's own is_causal false does. */
  function isCausalNotes(config, modelType, plan = []) {
    if (get(config, "is_causal") !== false || !has(config, "is_causal") || encoder(config, modelType)) return [];
    const chunks = plan.includes("chunked_attention") ? " (chunked_attention layers keep their causal chunks: " +
      "transformers' chunked mask builder has no such branch)" : "";
    return ["config['is_causal'] is false: transformers' mask builders then build bidirectional masks " +
      "(masking_utils.py:954, 1180), so every attention layer also sees the tokens after the query, the full " +
      `layers all of them, a sliding layer as many on each side as its window (|q - k| <= W)${chunks}: so in ` +
      "eager and sdpa attention; flash attention takes is_causal from the attention module instead " +
      "(flash_attention.py:86), not checked here"];
  }

  global.posencRopeTwoWay = Object.freeze({ ENCODERS, DECODER_SWITCH, PARTS, partNotes, twoSided, centred, asJson, bidirectional, causalKeptNotes, notCausal,
    sidesOfFull, opened, isCausalNotes });
})(typeof window !== "undefined" ? window : globalThis);
