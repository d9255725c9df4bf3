// The formulas behind the explorer's widgets: small pure functions, no drawing, no DOM.
// Each one mirrors a posenc function, computed in float64 (JavaScript numbers), and
// tests/site/check_explorer.py compares them with posenc in Chromium.
//
//   sinusoidalEncoding        posenc.sinusoidal.sinusoidal_encoding   (Vaswani et al. 2017, §3.5)
//   ropeInverseFrequencies    posenc.rope_scaling.rope_inverse_frequencies (rope_scaling.js)
//   ropeAttentionScaling      posenc.rope_scaling.rope_attention_scaling   (rope_scaling.js)
//   ropeFromConfig            posenc.configs.from_config            (rope_config.js)
//   ropeReadConfig            posenc.configs.read_config            (rope_config.js)
//   ropeQueryTemperature      posenc.configs.query_temperature      (rope_config.js)
//   ropeWarnings              posenc.inspect.warnings_for           (rope_config.js)
//   parseJSON                 Python's json.loads, with Python's ints and floats (pyvalues.js)
//   alibiSlopes               posenc.alibi.alibi_slopes               (Press et al. 2022)
//   t5RelativePositionBucket  posenc.relative.t5_relative_position_bucket (Raffel et al. 2020)
//   slowestTurning            the scaling widget's readout: the slowest pair that still turns
//
// Bad input throws a TypeError or RangeError naming the argument, the value and what is allowed;
// the RoPE functions throw what posenc raises: an Error named ValueError or TypeError whose
// message is posenc's, character for character. A config read by parseJSON keeps Python's types
// ("8.0" a float, "8" an int); in one built in JavaScript, an integral number counts as an int.
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

  // The slowest pair that still turns after scaling, for the scaling widget's readout: under
  // p-RoPE the last pairs stop turning (no wavelength), so the pair to compare before and after is
  // the last one with a finite wavelength, not the last pair. Wavelengths in, indices out.
  function slowestTurning(before, after) {
    if (before.length !== after.length) {
      throw new RangeError(`before and after must be as long (got ${before.length} and ${after.length})`);
    }
    let pair = after.length - 1;
    while (pair >= 0 && !Number.isFinite(after[pair])) pair--;
    const still = after.length - 1 - pair;
    return { pair, before: before[pair], after: after[pair], stillFrom: still ? pair + 1 : null };
  }

  const S = global.posencRopeScaling;
  // The config reader loads with the config inspector (explorer.js, group "config").
  const loaded = (name) => {
    if (!global[name]) throw new Error(`posenc explorer: ${name} is not loaded (it comes with the config inspector)`);
    return global[name];
  };
  const C = () => loaded("posencRopeConfig");
  global.posencExplorer = Object.freeze({
    sinusoidalEncoding,
    ropeInverseFrequencies: S.ropeInverseFrequencies,
    ropeAttentionScaling: S.ropeAttentionScaling,
    ropeFromConfig: (config, layerType = null, { layout = null } = {}) => C().fromConfig(config, layerType, layout),
    ropeReadConfig: (config, { layout = null } = {}) => C().readConfig(config, layout),
    ropeQueryTemperature: (temperature, position) => C().queryTemperature(temperature, position),
    ropeWarnings: (rope, length = null, config = null) => C().warningsFor(rope, length, config),
    parseJSON: (text) => loaded("posencJSON").parseJSON(text),
    alibiSlopes,
    t5RelativePositionBucket,
    slowestTurning,
  });
})(typeof window !== "undefined" ? window : globalThis);
