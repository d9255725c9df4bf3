// The formulas behind the explorer's widgets: small pure functions, no drawing, no DOM.
// Each one mirrors a posenc function, computed in float64 (JavaScript numbers), and
// tests/site/check_explorer.py compares them with posenc in Chromium over a grid of parameters.
//
//   sinusoidalEncoding        posenc.sinusoidal.sinusoidal_encoding   (Vaswani et al. 2017, §3.5)
//   ropeInverseFrequencies    posenc's rope_inverse_frequencies      (Su et al. 2021 and the scaling papers)
//   ropeAttentionScaling      posenc's rope_attention_scaling        (YaRN, Peng et al. 2023; LongRoPE, Ding et al. 2024)
//   alibiSlopes               posenc.alibi.alibi_slopes               (Press et al. 2022)
//   t5RelativePositionBucket  posenc.relative.t5_relative_position_bucket (Raffel et al. 2020)
//
// Bad input throws a TypeError or RangeError naming the argument, the value and what is allowed.
(function (global) {
  "use strict";

  const MAX_CELLS = 1 << 22; // bound on rows x columns: a small request never allocates much

  function describe(value) {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch (error) {
      return String(value);
    }
  }

  function checkInt(name, value, minimum, maximum) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw new TypeError(`${name} must be an integer, got ${describe(value)}`);
    }
    if (value < minimum || (maximum !== undefined && value > maximum)) {
      const range = maximum === undefined ? `>= ${minimum}` : `between ${minimum} and ${maximum}`;
      throw new RangeError(`${name} must be ${range}, got ${value}`);
    }
    return value;
  }

  function checkNumber(name, value, { positive = false, minimum } = {}) {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new TypeError(`${name} must be a finite number, got ${describe(value)}`);
    }
    if (positive && !(value > 0)) throw new RangeError(`${name} must be > 0, got ${value}`);
    if (minimum !== undefined && value < minimum) {
      throw new RangeError(`${name} must be >= ${minimum}, got ${value}`);
    }
    return value;
  }

  function checkEvenDim(name, value) {
    checkInt(name, value, 2);
    if (value % 2) throw new RangeError(`${name} must be a positive even integer, got ${value}`);
    return value;
  }

  function checkBase(base) {
    checkNumber("base", base, { positive: true });
    if (base === 1) throw new RangeError("base must be > 0 and != 1, got 1");
    return base;
  }

  /** theta_i = base^(-2i/dim) for i = 0 .. dim/2 - 1. */
  function defaultFrequencies(dim, base) {
    const theta = new Array(dim / 2);
    for (let i = 0; i < dim / 2; i++) theta[i] = Math.pow(base, -(2 * i) / dim);
    return theta;
  }

  /** positions rows of dim numbers: sin(p theta_i) in column 2i, cos(p theta_i) in column 2i + 1. */
  function sinusoidalEncoding(positions, dim, base = 10000) {
    checkInt("positions", positions, 0);
    checkEvenDim("dim", dim);
    checkBase(base);
    if (positions * dim > MAX_CELLS) {
      throw new RangeError(`positions * dim must be at most ${MAX_CELLS}, got ${positions} * ${dim}`);
    }
    const theta = defaultFrequencies(dim, base);
    const rows = [];
    for (let p = 0; p < positions; p++) {
      const row = new Array(dim);
      for (let i = 0; i < dim / 2; i++) {
        const angle = p * theta[i];
        row[2 * i] = Math.sin(angle);
        row[2 * i + 1] = Math.cos(angle);
      }
      rows.push(row);
    }
    return rows;
  }

  // ---- RoPE scaling: the keys of posenc's `scaling` dict, type by type -----------------------
  const REQUIRED = {
    linear: ["factor"],
    ntk: ["factor"],
    dynamic: ["factor", "original_max_position_embeddings"],
    yarn: ["factor", "original_max_position_embeddings"],
    llama3: ["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"],
    proportional: ["partial_rotary_factor"],
    longrope: ["factor", "original_max_position_embeddings", "short_factor", "long_factor"],
  };
  const OPTIONAL = {
    linear: [],
    ntk: [],
    dynamic: [],
    yarn: ["beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"],
    llama3: [],
    proportional: ["factor"],
    longrope: ["attention_factor"],
  };

  function checkScaling(scaling) {
    if (scaling === null || scaling === undefined) return null;
    if (typeof scaling !== "object" || Array.isArray(scaling)) {
      throw new TypeError(`scaling must be an object such as {type: "linear", factor: 2} or null, got ${describe(scaling)}`);
    }
    const kind = scaling.type;
    if (!Object.prototype.hasOwnProperty.call(REQUIRED, kind)) {
      throw new RangeError(`scaling.type must be one of ${Object.keys(REQUIRED).join(", ")}, got ${describe(kind)}`);
    }
    for (const key of REQUIRED[kind]) {
      if (!(key in scaling)) throw new RangeError(`scaling of type "${kind}" is missing the key "${key}"`);
    }
    const allowed = new Set(["type", ...REQUIRED[kind], ...OPTIONAL[kind]]);
    for (const key of Object.keys(scaling)) {
      if (!allowed.has(key)) throw new RangeError(`scaling of type "${kind}" got the unknown key "${key}"`);
    }
    const checked = { type: kind, factor: checkNumber("scaling.factor", scaling.factor ?? 1, { minimum: 1 }) };
    if ("original_max_position_embeddings" in scaling) {
      checked.original = checkInt(
        "scaling.original_max_position_embeddings", scaling.original_max_position_embeddings, 1);
    }
    if (kind === "yarn") {
      checked.betaFast = checkNumber("scaling.beta_fast", scaling.beta_fast ?? 32, { positive: true });
      checked.betaSlow = checkNumber("scaling.beta_slow", scaling.beta_slow ?? 1, { positive: true });
      if (checked.betaFast <= checked.betaSlow) {
        throw new RangeError(`scaling.beta_fast must be greater than scaling.beta_slow, got ${checked.betaFast} and ${checked.betaSlow}`);
      }
      for (const [key, name] of [["mscale", "mscale"], ["mscale_all_dim", "mscaleAllDim"]]) {
        if (scaling[key] !== undefined && scaling[key] !== null) checked[name] = checkNumber(`scaling.${key}`, scaling[key], { minimum: 0 });
      }
      const truncate = scaling.truncate ?? true;
      if (typeof truncate !== "boolean") throw new TypeError(`scaling.truncate must be true or false, got ${describe(truncate)}`);
      checked.truncate = truncate;
    }
    if (scaling.attention_factor !== undefined && scaling.attention_factor !== null) {
      checked.attentionFactor = checkNumber("scaling.attention_factor", scaling.attention_factor, { positive: true });
    }
    if (kind === "proportional") {
      checked.fraction = checkNumber("scaling.partial_rotary_factor", scaling.partial_rotary_factor, { minimum: 0 });
      if (checked.fraction > 1) throw new RangeError(`scaling.partial_rotary_factor must be between 0 and 1, got ${checked.fraction}`);
    }
    if (kind === "longrope") {
      for (const [key, name] of [["short_factor", "short"], ["long_factor", "long"]]) {
        if (!Array.isArray(scaling[key])) throw new TypeError(`scaling.${key} must be an array of positive numbers, got ${describe(scaling[key])}`);
        checked[name] = scaling[key].map((v, i) => checkNumber(`scaling.${key}[${i}]`, v, { positive: true }));
      }
    }
    if (kind === "llama3") {
      checked.low = checkNumber("scaling.low_freq_factor", scaling.low_freq_factor, { positive: true });
      checked.high = checkNumber("scaling.high_freq_factor", scaling.high_freq_factor, { positive: true });
      if (checked.high <= checked.low) {
        throw new RangeError(`scaling.high_freq_factor must be greater than scaling.low_freq_factor, got ${checked.high} and ${checked.low}`);
      }
    }
    return checked;
  }

  // YaRN (Peng et al. 2023): the fractional pair index whose wavelength fits `rotations` times
  // into the trained length.
  function yarnPairIndex(rotations, dim, base, original) {
    return (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
  }

  /** dim/2 rotation frequencies (radians per position), changed by `scaling` (null: unchanged). */
  function ropeInverseFrequencies(dim, base = 10000, scaling = null, seqLen = null) {
    checkEvenDim("dim", dim);
    checkBase(base);
    const s = checkScaling(scaling);
    if (seqLen !== null && seqLen !== undefined) checkInt("seqLen", seqLen, 1);
    else seqLen = null;
    const theta = defaultFrequencies(dim, base);
    if (s === null) return theta;
    const factor = s.factor;
    if ((s.type === "ntk" || s.type === "dynamic") && dim === 2) {
      throw new RangeError(`dim must be >= 4 for scaling type "${s.type}", got 2`);
    }
    switch (s.type) {
      case "linear": // position interpolation (Chen et al. 2023): every frequency / factor
        return theta.map((t) => t / factor);
      case "ntk": // NTK-aware base change
        return defaultFrequencies(dim, base * Math.pow(factor, dim / (dim - 2)));
      case "dynamic": { // dynamic NTK: a base that grows with the current length past the trained one
        const length = seqLen === null || seqLen <= s.original ? s.original : seqLen;
        const scale = (factor * length) / s.original - (factor - 1);
        return defaultFrequencies(dim, base * Math.pow(scale, dim / (dim - 2)));
      }
      case "yarn": {
        let low = yarnPairIndex(s.betaFast, dim, base, s.original);
        let high = yarnPairIndex(s.betaSlow, dim, base, s.original);
        if (s.truncate) {
          low = Math.floor(low);
          high = Math.ceil(high);
        }
        low = Math.max(low, 0);
        high = Math.min(high, dim - 1);
        if (low === high) high += 0.001;
        return theta.map((t, i) => {
          const ramp = Math.min(Math.max((i - low) / (high - low), 0), 1);
          return (t / factor) * ramp + t * (1 - ramp);
        });
      }
      case "proportional": { // p-RoPE (Barbero et al. 2024): only the fastest pairs turn, the rest get 0
        const turning = Math.floor((s.fraction * dim) / 2);
        return theta.map((t, i) => (i < turning ? t / factor : 0));
      }
      case "longrope": { // LongRoPE (Ding et al. 2024): one factor per pair, the long list past the trained length
        for (const [key, list] of [["short_factor", s.short], ["long_factor", s.long]]) {
          if (list.length !== dim / 2) throw new RangeError(`scaling.${key} must have ${dim / 2} entries, got ${list.length}`);
        }
        const chosen = seqLen !== null && seqLen > s.original ? s.long : s.short;
        return theta.map((t, i) => t / chosen[i]);
      }
      default: { // llama3
        return theta.map((t) => {
          const wavelength = (2 * Math.PI) / t;
          const smooth = Math.min(Math.max((s.original / wavelength - s.low) / (s.high - s.low), 0), 1);
          return ((1 - smooth) * t) / factor + smooth * t;
        });
      }
    }
  }

  // YaRN's sqrt(1/t) = 0.1 a ln(s) + 1 (Peng et al. 2023; a = mscale as in DeepSeek-V2), 1 for s <= 1.
  const yarnMscale = (factor, mscale = 1) => (factor <= 1 ? 1 : 0.1 * mscale * Math.log(factor) + 1);

  /** The factor multiplying cos and sin: 1 except for YaRN and LongRoPE. */
  function ropeAttentionScaling(scaling = null) {
    const s = checkScaling(scaling);
    if (s === null || (s.type !== "yarn" && s.type !== "longrope")) return 1;
    if (s.attentionFactor !== undefined) return s.attentionFactor;
    if (s.type === "longrope") {
      return s.factor <= 1 || s.original === 1 ? 1 : Math.sqrt(1 + Math.log(s.factor) / Math.log(s.original));
    }
    if (s.mscale && s.mscaleAllDim) return yarnMscale(s.factor, s.mscale) / yarnMscale(s.factor, s.mscaleAllDim);
    return yarnMscale(s.factor);
  }

  function powerOfTwoSlopes(heads) {
    const slopes = [];
    for (let h = 1; h <= heads; h++) slopes.push(Math.pow(2, (-8 * h) / heads));
    return slopes;
  }

  /** ALiBi's slope of each head; a non-power-of-two count takes every other slope of the next power. */
  function alibiSlopes(numHeads) {
    checkInt("numHeads", numHeads, 1, 1 << 16);
    let closest = 1;
    while (closest * 2 <= numHeads) closest *= 2;
    const slopes = powerOfTwoSlopes(closest);
    if (closest < numHeads) {
      const extra = powerOfTwoSlopes(2 * closest).filter((_, index) => index % 2 === 0);
      slopes.push(...extra.slice(0, numHeads - closest));
    }
    return slopes;
  }

  /** T5's bucket of one offset (key - query), evaluated in float32 like T5's reference code. */
  function t5RelativePositionBucket(relativePosition, bidirectional = true, numBuckets = 32, maxDistance = 128) {
    checkInt("relativePosition", relativePosition, -Number.MAX_SAFE_INTEGER);
    if (typeof bidirectional !== "boolean") {
      throw new TypeError(`bidirectional must be true or false, got ${describe(bidirectional)}`);
    }
    checkInt("numBuckets", numBuckets, bidirectional ? 4 : 2);
    if (bidirectional && numBuckets % 2) {
      throw new RangeError(`numBuckets must be even when bidirectional is true, got ${numBuckets}`);
    }
    checkInt("maxDistance", maxDistance, 1);
    const buckets = bidirectional ? numBuckets / 2 : numBuckets;
    const exact = Math.floor(buckets / 2);
    if (maxDistance <= exact) {
      throw new RangeError(`maxDistance must be greater than the ${exact} exact buckets per direction, got ${maxDistance}`);
    }
    const first = bidirectional && relativePosition > 0 ? buckets : 0;
    const distance = bidirectional ? Math.abs(relativePosition) : Math.max(-relativePosition, 0);
    if (distance < exact) return first + distance;
    // float32 at every step, in the reference order: log(n / e) / log(M / e) * (b - e), truncated
    const f32 = Math.fround;
    const ratio = f32(f32(distance) / f32(exact));
    const scaled = f32(f32(f32(Math.log(ratio)) / f32(Math.log(maxDistance / exact))) * f32(buckets - exact));
    return first + Math.min(exact + Math.trunc(scaled), buckets - 1);
  }

  global.posencExplorer = Object.freeze({
    sinusoidalEncoding,
    ropeInverseFrequencies,
    ropeAttentionScaling,
    alibiSlopes,
    t5RelativePositionBucket,
  });
})(typeof window !== "undefined" ? window : globalThis);
