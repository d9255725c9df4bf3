// The config-class rules of posenc/configs/_class_rope.py: rope keys and types a class renames in its own
// code (ROPE_RENAMES, classRope), rope types it refuses or posenc cannot read for it (CLASS_ROPE_TYPES,
// classRopeTypes), and Qwen4-Exp's indexer width (INDEXER_FITS, indexerFit). rope_plan.js re-exports them
// on posencRopePlan; rope_config.js's readConfig calls them there.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const R = global.posencRopeParams;
  const { valueError, typeError, repr, get } = P;
  // posenc/configs/_class_rope.py ROPE_RENAMES: rope keys and types a config class renames in its own code
  // (HunYuan-VL's, configuration_hunyuan_vl.py:171-222; tests/test_rope_class_renames.py checks it equals Python's)
  const ROPE_RENAMES = {
    hunyuan_vl_text: { keys: { xdrope_section: "mrope_section" }, types: { xdrope: "dynamic" },
      whole: "mrope_section", where: "configuration_hunyuan_vl.py:171-222",
      whole_where: "configuration_hunyuan_vl.py:194-206" },
  };

  /** class_rope: the config with rope_parameters and rope_scaling as the class keeps them (ROPE_RENAMES). */
  function classRope(config, modelType) {
    const name = modelType === null ? null : R.textModelType(modelType);
    const rule = name !== null && P.has(ROPE_RENAMES, name) ? ROPE_RENAMES[name] : null;
    if (rule === null) return config;
    const out = { ...config };
    for (const source of ["rope_scaling", "rope_parameters"]) {
      const value = get(config, source);
      if (P.isMapping(value) && P.truthy(value)) out[source] = renamedRope(value, rule, source);
    }
    return out;
  }

  // posenc/configs/_class_rope.py CLASS_ROPE_TYPES: rope types a class refuses (Phi-3's, Cosmos3 Edge's) or that
  // posenc cannot read for it (PhiMoE's short_mscale / long_mscale by length)
  const CLASS_ROPE_TYPES = {
    phi3: { types: ["default", "longrope"], where: "configuration_phi3.py:122-123" },
    phi4_multimodal: { types: ["default", "longrope"], where: "configuration_phi4_multimodal.py:264-265" },
    cosmos3_edge_text: { types: ["default"], sections: 3, where: "configuration_cosmos3_edge.py:105-114" },
    phimoe: { types: ["default"], unread: "modeling_phimoe.py:82-95" },
  };

  // _class_rope.INDEXER_FITS: Qwen4-Exp's class refuses a rotated width wider than its indexer's head
  // once any indexer key is given (configuration_qwen4_exp.py:205-230).
  const INDEXER_FITS = {
    qwen4_exp_text: { key: "indexer_head_dim", where: "configuration_qwen4_exp.py:205-230",
      keys: ["indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio"] },
  };

  /** _class_rope.indexer_fit: refuse a rotated width wider than the indexer's head where the class refuses it. */
  function indexerFit(config, modelType, widths) {
    const name = modelType === null ? null : R.textModelType(modelType);
    const rule = name !== null && P.has(INDEXER_FITS, name) ? INDEXER_FITS[name] : null;
    if (rule === null || rule.keys.every((key) => get(config, key) === null)) return;
    const missing = rule.keys.filter((key) => get(config, key) === null);
    if (missing.length) { // the class's own check (configuration_qwen4_exp.py:214-217)
      throw valueError(`config needs ${missing.map(repr).join(", ")} beside the indexer's other keys: transformers' ` +
        `config class for model type ${repr(modelType)} refuses part of them (QSA config is missing required ` +
        `fields): give all of ${rule.keys.map(repr).join(", ")}, or none`);
    }
    const size = get(config, rule.key);
    if (!P.isInt(size)) return; // the class's other checks refuse it (a missing or non-integer key): not the rotation's
    for (const width of widths) {
      if (width > P.toNumber(size)) {
        throw valueError(`config[${repr(rule.key)}] is ${repr(size)}, narrower than the rotated width ${width} (head_dim * ` +
          `partial_rotary_factor): transformers' config class for model type ${repr(modelType)} refuses it once the ` +
          `indexer's keys are given, as its indexer turns the first rotated-width features of its heads (${rule.where})`);
      }
    }
  }

  /** class_rope_types: refuse a rope type (or M-RoPE sections) the class refuses, or that posenc cannot read for it. */
  function classRopeTypes(config, modelType) {
    const name = modelType === null ? null : R.textModelType(modelType);
    const rule = name !== null && P.has(CLASS_ROPE_TYPES, name) ? CLASS_ROPE_TYPES[name] : null;
    if (rule === null) return;
    const found = R.entry(modelType) || {};
    const aliases = get(found, "type_aliases") || {};
    for (const source of ["rope_scaling", "rope_parameters"]) {
      const params = get(config, source);
      if (!P.isMapping(params)) continue;
      let kind = P.has(params, "rope_type") ? get(params, "rope_type") : get(params, "type");
      if (!P.truthy(kind)) kind = "default";
      if (typeof kind !== "string") continue; // refused by name where the rope parameters are read
      if (P.has(aliases, kind)) kind = aliases[kind];
      if (!rule.types.includes(kind) && P.has(rule, "unread")) {
        throw valueError(`config[${repr(source)}] has rope type ${repr(kind)}: transformers' rotary module for model type ` +
          `${repr(modelType)} then multiplies cos and sin by short_mscale or long_mscale, chosen by the input's length ` +
          `(${rule.unread}); posenc reads one attention factor for every length and does not read this config`);
      }
      if (!rule.types.includes(kind)) {
        const allowed = rule.types.map((t) => repr(t)).join(" and ");
        throw valueError(`config[${repr(source)}] has rope type ${repr(kind)}: transformers' config class for model type ` +
          `${repr(modelType)} accepts only ${allowed} (${rule.where})`);
      }
      const sections = get(params, "mrope_section");
      const headDim = R.field(found, config, "head_dim");
      if (P.truthy(rule.sections) && P.isList(sections) && (sections.length !== rule.sections || (
        P.isInt(headDim) && sections.every((s) => P.isInt(s)) &&
        sections.reduce((a, b) => a + P.toNumber(b), 0) !== Math.floor(P.toNumber(headDim) / 2)))) {
        throw valueError(`config[${repr(source)}]['mrope_section'] must be ${rule.sections} sections summing to ` +
          `head_dim / 2 (${repr(headDim)}/2), got ${P.reprCut(sections, 60)}: transformers' config class for ` +
          `model type ${repr(modelType)} refuses others (${rule.where})`);
      }
    }
  }

  function renamedRope(params, rule, source) {
    const out = { ...params };
    const spelled = {}; // the name the config gave a renamed key's value under, for the messages
    for (const [old, neu] of Object.entries(rule.keys)) {
      const legacy = get(out, old);
      delete out[old];
      if (legacy === null) continue;
      const given = get(out, neu);
      if (given === null) {
        out[neu] = legacy;
        spelled[neu] = old;
      } else if (!P.equal(floats(`config[${repr(source)}][${repr(old)}]`, legacy),
        floats(`config[${repr(source)}][${repr(neu)}]`, given))) {
        throw valueError(`config[${repr(source)}] gives both ${repr(neu)} (${P.reprCut(given, 60)}) and the legacy ` +
          `${repr(old)} (${P.reprCut(legacy, 60)}), and they differ: transformers' config class refuses that ` +
          `(${rule.where}); give one`);
      }
    }
    let kind = P.has(out, "rope_type") ? get(out, "rope_type") : get(out, "type");
    if (typeof kind === "string" && P.has(rule.types, kind)) kind = rule.types[kind];
    if (kind !== null) { // the class writes rope_type, and 'type' where the config gives it, from one value
      out.rope_type = kind;
      if (P.has(out, "type")) out.type = kind;
    }
    const whole = rule.whole;
    if (whole && get(out, whole) !== null) {
      const name = `config[${repr(source)}][${repr(P.has(spelled, whole) ? spelled[whole] : whole)}]`;
      const values = floats(name, out[whole]);
      if (!values.every((v) => Number.isInteger(v))) {
        throw valueError(`${name} must hold whole numbers, got ${P.reprCut(out[whole], 60)}: transformers' config class ` +
          `refuses others ('Illegal mrope partition', ${rule.whole_where})`);
      }
      out[whole] = values;
    }
    return out;
  }

  /** The sections as the class compares them (float(section) for each); numbers only. */
  function floats(name, value) {
    if (!P.isList(value) || !value.every((item) => P.isReal(item) && !P.isBool(item))) {
      throw typeError(`${name} must be a list of numbers, got ${P.reprCut(value, 60)}`);
    }
    return value.map((item) => P.toNumber(item));
  }

  global.posencRopeClassRope = Object.freeze({ classRope, ROPE_RENAMES, classRopeTypes, CLASS_ROPE_TYPES, indexerFit,
    INDEXER_FITS });
})(typeof window !== "undefined" ? window : globalThis);
