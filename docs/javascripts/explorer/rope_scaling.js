// RoPE frequencies and the context-extension rules: a port of posenc/rope_scaling.py (the Scaling
// record, parse_scaling, rope_inverse_frequencies, rope_attention_scaling) and of the rules and their
// table, which live in posenc/_scaling_rules.py; the same checks in the same order and the same
// messages (Python's ValueError and TypeError become a PyError of that name, see pyvalues.js).
// Every rule cites its paper in rope_inverse_frequencies' docstring (posenc/rope_scaling.py).
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, reprFloat } = P;

  const MAX_ROPE_DIM = 2 ** 16;
  const MAX_SEQ_LEN = 2 ** 53;

  const real = (name, v, bounds) => P.checkFloat(name, v, bounds);
  // the range of a rule's real-valued settings, as posenc's (no rule overflows within it)
  const LARGEST = 1e6, SMALLEST = 1e-6;
  const length = (name, v) => P.checkInt(name, v, { minimum: 1, maximum: MAX_SEQ_LEN });

  function factors(name, value) {
    if (!P.isList(value)) {
      throw typeError(`${name} must be a list of positive numbers (one per rotated pair), got ${P.typeName(value)}`);
    }
    return value.map((v, i) => real(`${name}[${i}]`, v, { positive: true, minimum: SMALLEST, maximum: LARGEST }));
  }

  // key -> how its value is checked (and converted), in posenc's order
  const FIELD_CHECKS = [
    ["factor", (n, v) => real(n, v, { minimum: 1.0, maximum: LARGEST })],
    ["original_max_position_embeddings", length],
    ["max_position_embeddings", length],
    ["attention_factor", (n, v) => real(n, v, { positive: true, maximum: LARGEST })],
    ["beta_fast", (n, v) => real(n, v, { positive: true, minimum: SMALLEST, maximum: LARGEST })],
    ["beta_slow", (n, v) => real(n, v, { positive: true, minimum: SMALLEST, maximum: LARGEST })],
    ["mscale", (n, v) => real(n, v, { minimum: 0.0, maximum: LARGEST })],
    ["mscale_all_dim", (n, v) => real(n, v, { minimum: 0.0, maximum: LARGEST })],
    ["truncate", P.checkBool],
    ["low_freq_factor", (n, v) => real(n, v, { positive: true, maximum: LARGEST })],
    ["high_freq_factor", (n, v) => real(n, v, { positive: true, maximum: LARGEST })],
    ["partial_rotary_factor", (n, v) => real(n, v, { minimum: 0.0, maximum: 1.0 })],
    ["short_factor", factors],
    ["long_factor", factors],
  ];
  const FIELDS = FIELD_CHECKS.map(([key]) => key);

  // ---- the rules: one signature each, rule(s, dim, base, seqLen) -> theta --------------------
  function defaultFrequencies(dim, base) {
    const theta = new Array(dim / 2);
    for (let i = 0; i < dim / 2; i++) theta[i] = Math.pow(base, -((2 * i) / dim));
    return theta;
  }
  const scale = (s) => (s.factor === null ? 1.0 : s.factor);
  const original = (s) => s.original_max_position_embeddings || 1;

  const linear = (s, dim, base) => defaultFrequencies(dim, base).map((t) => t / scale(s));

  const ntk = (s, dim, base) => defaultFrequencies(dim, base * Math.pow(scale(s), dim / (dim - 2)));

  function dynamic(s, dim, base, seqLen) {
    const trained = original(s), factor = scale(s);
    const now = seqLen === null || seqLen <= trained ? trained : seqLen;
    const grown = (factor * now) / trained - (factor - 1);
    return defaultFrequencies(dim, base * Math.pow(grown, dim / (dim - 2)));
  }

  const yarnPairIndex = (rotations, dim, base, trained) =>
    (dim * Math.log(trained / (rotations * 2 * Math.PI))) / (2 * Math.log(base));

  function yarn(s, dim, base) {
    const theta = defaultFrequencies(dim, base), trained = original(s);
    let low = yarnPairIndex(s.beta_fast || 32.0, dim, base, trained);
    let high = yarnPairIndex(s.beta_slow || 1.0, dim, base, trained);
    if (s.truncate !== false) {
      low = Math.floor(low);
      high = Math.ceil(high);
    }
    low = Math.max(low, 0);
    high = Math.min(high, dim - 1);
    if (low === high) high += 0.001; // a step
    return theta.map((t, i) => {
      const ramp = Math.min(Math.max((i - low) / (high - low), 0), 1);
      return (t / scale(s)) * ramp + t * (1 - ramp);
    });
  }

  function llama3(s, dim, base) {
    const trained = original(s), low = s.low_freq_factor || 1.0, high = s.high_freq_factor || 1.0;
    return defaultFrequencies(dim, base).map((t) => {
      const wavelength = (2 * Math.PI) / t;
      const smooth = high > low ? Math.min(Math.max((trained / wavelength - low) / (high - low), 0), 1)
        : wavelength <= trained / low ? 1 : 0;
      return ((1 - smooth) * t) / scale(s) + smooth * t;
    });
  }

  function proportional(s, dim, base) {
    const fraction = s.partial_rotary_factor === null ? 1.0 : s.partial_rotary_factor;
    const turning = Math.floor((fraction * dim) / 2);
    return defaultFrequencies(dim, base).map((t, i) => (i < turning ? t / scale(s) : 0.0));
  }

  function longrope(s, dim, base, seqLen) {
    const long = seqLen !== null && seqLen > original(s);
    const chosen = (long ? s.long_factor : s.short_factor) || [];
    return defaultFrequencies(dim, base).map((t, i) => t / chosen[i]);
  }

  // ---- attention factors ---------------------------------------------------------------------
  const yarnMscale = (factor, mscale = 1.0) => (factor <= 1.0 ? 1.0 : 0.1 * mscale * Math.log(factor) + 1.0);

  function yarnAttention(s) {
    if (s.attention_factor !== null) return s.attention_factor;
    if (s.mscale && s.mscale_all_dim) return yarnMscale(scale(s), s.mscale) / yarnMscale(scale(s), s.mscale_all_dim);
    return yarnMscale(scale(s));
  }

  const longropeFactor = (s) => (s.factor !== null ? s.factor : (s.max_position_embeddings || 1) / original(s));

  function longropeAttention(s) {
    if (s.attention_factor !== null) return s.attention_factor;
    const factor = longropeFactor(s), trained = original(s);
    if (factor <= 1.0 || trained === 1) return 1.0;
    return Math.sqrt(1 + Math.log(factor) / Math.log(trained));
  }

  // ---- cross-key checks ----------------------------------------------------------------------
  function checkYarn(s) {
    const fast = s.beta_fast || 32.0, slow = s.beta_slow || 1.0;
    if (fast < slow) {
      throw valueError("scaling['beta_fast'] must be greater than or equal to scaling['beta_slow'], " +
        `got beta_fast=${reprFloat(fast)}, beta_slow=${reprFloat(slow)}`);
    }
  }

  function checkLlama3(s) {
    const low = s.low_freq_factor || 1.0, high = s.high_freq_factor || 1.0;
    if (high < low) {
      throw valueError("scaling['high_freq_factor'] must be greater than or equal to scaling['low_freq_factor'], " +
        `got high_freq_factor=${reprFloat(high)}, low_freq_factor=${reprFloat(low)}`);
    }
  }

  function checkLongrope(s) {
    if (s.factor === null && s.max_position_embeddings === null && s.attention_factor === null) {
      throw valueError("scaling of type 'longrope' needs 'factor', or 'max_position_embeddings' (the factor is then " +
        "max_position_embeddings / original_max_position_embeddings), or 'attention_factor'");
    }
  }

  const rule = (required, optional, frequencies, more = {}) => ({
    required, optional, frequencies, attention: () => 1.0, check: null, minDim: 2, fullWidth: false, lengthDependent: false, ...more,
  });
  const RULES = {
    linear: rule(["factor"], [], linear),
    ntk: rule(["factor"], [], ntk, { minDim: 4 }),
    dynamic: rule(["factor", "original_max_position_embeddings"], [], dynamic, { minDim: 4, lengthDependent: true }),
    yarn: rule(["factor", "original_max_position_embeddings"],
      ["beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"], yarn,
      { attention: yarnAttention, check: checkYarn }),
    llama3: rule(["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"], [], llama3,
      { check: checkLlama3 }),
    proportional: rule([], ["partial_rotary_factor", "factor"], proportional, { fullWidth: true }),
    longrope: rule(["original_max_position_embeddings", "short_factor", "long_factor"],
      ["factor", "max_position_embeddings", "attention_factor"], longrope,
      { attention: longropeAttention, check: checkLongrope, lengthDependent: true }),
  };
  const SCALING_TYPES = Object.keys(RULES);

  // ---- parse_scaling and Scaling.__post_init__ ---------------------------------------------------
  /** A checked scaling record ({type, and every field: a number, a list, a bool or null}), or null. */
  function parseScaling(scaling) {
    if (P.isNone(scaling)) return null;
    if (!P.isMapping(scaling)) {
      throw typeError(`scaling must be a dict such as {'type': 'linear', 'factor': 2.0} or None, got ${P.typeName(scaling)}`);
    }
    if (!P.has(scaling, "type")) {
      throw valueError(`scaling is missing the key 'type' (one of ${SCALING_TYPES.map(repr).join(", ")}), ` +
        `got keys ${repr(P.sortedStrings(P.keys(scaling)))}`);
    }
    const kind = P.checkChoice("scaling['type']", P.get(scaling, "type"), SCALING_TYPES);
    const { required, optional, check } = RULES[kind];
    for (const key of P.keys(scaling)) {
      if (key !== "type" && !required.includes(key) && !optional.includes(key)) {
        throw valueError(`scaling of type ${repr(kind)} got the unknown key ${repr(key)} ` +
          `(allowed: ${P.sortedStrings(["type", ...required, ...optional]).map(repr).join(", ")})`);
      }
    }
    const record = { type: kind };
    for (const [key, checkField] of FIELD_CHECKS) {
      const v = P.get(scaling, key);
      record[key] = v === null ? null : checkField(`scaling[${repr(key)}]`, v);
    }
    for (const key of required) {
      if (record[key] === null) {
        throw valueError(`scaling of type ${repr(kind)} is missing the key ${repr(key)} ` +
          `(required: ${required.map(repr).join(", ")})`);
      }
    }
    if (check) check(record);
    return record;
  }

  function checkDim(name, value) {
    const dim = P.checkEvenDim(name, value);
    if (P.less(MAX_ROPE_DIM, dim)) throw valueError(`${name} must be a positive even integer <= ${MAX_ROPE_DIM}, got ${dim}`);
    return dim;
  }

  /** posenc's rope_inverse_frequencies(dim, base=base, scaling=scaling, seq_len=seqLen, rotary_dim=rotaryDim). */
  function ropeInverseFrequencies(dim, base = 10000.0, scaling = null, seqLen = null, rotaryDim = null) {
    dim = checkDim("dim", dim);
    base = real("base", base, { positive: true });
    if (base === 1.0) throw valueError("base must be > 0 and != 1 (every pair would have the same frequency), got 1.0");
    const record = parseScaling(scaling);
    seqLen = P.isNone(seqLen) ? null : P.checkInt("seq_len", seqLen, { minimum: 1, maximum: MAX_SEQ_LEN });
    let width = dim;
    if (!P.isNone(rotaryDim)) {
      width = P.checkEvenDim("rotary_dim", rotaryDim);
      if (P.less(dim, width)) throw valueError(`rotary_dim must be a positive even integer <= dim (${dim}), got ${width}`);
    }
    if (record === null) return defaultFrequencies(width, base);
    const r = RULES[record.type];
    if (r.fullWidth && width !== dim) {
      throw valueError(`rotary_dim must be None with scaling type ${repr(record.type)} (it turns pairs of the ` +
        `full width and sets the slowest to zero), got rotary_dim=${rotaryDim}`);
    }
    if (width < r.minDim) {
      throw valueError(`${P.isNone(rotaryDim) ? "dim" : "rotary_dim"} must be >= ${r.minDim} for scaling type ` +
        `${repr(record.type)} (the exponent is d/(d-2)), got ${width}`);
    }
    for (const key of ["short_factor", "long_factor"]) {
      const list = record[key];
      if (list !== null && list.length !== width / 2) {
        throw valueError(`scaling[${repr(key)}] must have ${width / 2} entries (one per rotated pair of the width ` +
          `${width}), got ${list.length}`);
      }
    }
    return r.frequencies(record, width, base, seqLen);
  }

  /** posenc's rope_attention_scaling(scaling): the factor on cos and sin. */
  function ropeAttentionScaling(scaling = null) {
    const record = parseScaling(scaling);
    return record === null ? 1.0 : RULES[record.type].attention(record);
  }

  global.posencRopeScaling = Object.freeze({
    SCALING_TYPES, RULES, FIELDS, MAX_ROPE_DIM, LARGEST, parseScaling, ropeInverseFrequencies, ropeAttentionScaling, yarnMscale,
  });
})(typeof window !== "undefined" ? window : globalThis);
