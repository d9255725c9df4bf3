// Python's values in JavaScript, for the ports of posenc that must answer as posenc does: the same
// numbers, and for bad input the same error class about the same key (tests/site/check_explorer.py
// compares them with posenc in Chromium; the wording of a message is not compared).
//
// A config is read by `parseJSON` (json_values.js) into the values Python's `json` module gives.
// Its values keep the types Python gives them, which posenc's checks and messages depend on:
//   None -> null; bool -> boolean; str -> string; list -> Array; dict -> plain object;
//   int -> number (an integral number), or BigInt past 2^53 (Python's ints are exact);
//   float -> number (a non-integral number), or a Number object when its value is integral
//            ("8.0" is a float in Python, and `check_int` refuses it: JavaScript's 8 would not).
// `repr`/`str` print values as Python does; `check*` are posenc/_checks.py with its messages.
(function (global) {
  "use strict";

  /** An error that stands for a Python exception: `name` is the class (ValueError, TypeError). */
  class PyError extends Error {
    constructor(type, message) {
      super(message);
      this.name = type;
    }
  }
  const valueError = (message) => new PyError("ValueError", message);
  const typeError = (message) => new PyError("TypeError", message);

  // ---- types --------------------------------------------------------------------------------
  const isBool = (v) => typeof v === "boolean";
  const isInt = (v) => (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint";
  const isFloat = (v) => (typeof v === "number" && !Number.isInteger(v)) || v instanceof Number;
  const isReal = (v) => isInt(v) || isFloat(v);
  const isList = (v) => Array.isArray(v);
  const isMapping = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Number);
  const isNone = (v) => v === null || v === undefined;

  function typeName(v) {
    if (isNone(v)) return "NoneType";
    if (isBool(v)) return "bool";
    if (isInt(v)) return "int";
    if (isFloat(v)) return "float";
    if (typeof v === "string") return "str";
    if (isList(v)) return "list";
    if (isMapping(v)) return "dict";
    return typeof v;
  }

  /** `mapping.get(key)`: null when the key is missing (or undefined). */
  function get(mapping, key) {
    if (mapping instanceof Map) return mapping.has(key) ? mapping.get(key) ?? null : null;
    return Object.prototype.hasOwnProperty.call(mapping, key) ? mapping[key] ?? null : null;
  }
  const has = (mapping, key) => (mapping instanceof Map ? mapping.has(key)
    : Object.prototype.hasOwnProperty.call(mapping, key));
  const keys = (mapping) => (mapping instanceof Map ? [...mapping.keys()] : Object.keys(mapping));

  /** Python's truth value (empty lists, dicts and strings, 0 and None are false). */
  function truthy(v) {
    if (isNone(v)) return false;
    if (isList(v) || typeof v === "string") return v.length > 0;
    if (v instanceof Map) return v.size > 0;
    if (isMapping(v)) return Object.keys(v).length > 0;
    if (typeof v === "bigint") return v !== 0n;
    return +v !== 0; // NaN is true in Python
  }

  /** A real number (int, float or bool) as a JavaScript number. */
  const toNumber = (v) => (typeof v === "bigint" ? Number(v) : +v);

  /** Python's `==` between JSON values (1 == 1.0 == True; dicts and lists element by element). */
  function equal(a, b) {
    const numeric = (v) => isReal(v) || isBool(v);
    if (numeric(a) && numeric(b)) {
      if (typeof a === "bigint" || typeof b === "bigint") {
        const [x, y] = [a, b].map((v) => (typeof v === "bigint" ? v : Number.isInteger(+v) ? BigInt(+v) : null));
        return x !== null && y !== null && x === y;
      }
      return +a === +b;
    }
    if (isNone(a) || isNone(b)) return isNone(a) && isNone(b);
    if (isList(a) && isList(b)) return a.length === b.length && a.every((v, i) => equal(v, b[i]));
    if (isMapping(a) && isMapping(b)) {
      const ka = keys(a);
      return ka.length === keys(b).length && ka.every((k) => has(b, k) && equal(get(a, k), get(b, k)));
    }
    return typeof a === typeof b && a === b;
  }

  function deepCopy(v) {
    if (isList(v)) return v.map(deepCopy);
    if (v instanceof Number) return new Number(+v); // eslint-disable-line no-new-wrappers
    if (isMapping(v)) {
      const out = {};
      for (const k of Object.keys(v)) setKey(out, k, deepCopy(v[k]));
      return out;
    }
    return v;
  }

  /** obj[key] = value, also for the key "__proto__" (a JSON key like any other). */
  function setKey(obj, key, value) {
    if (key === "__proto__") Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
    else obj[key] = value;
  }

  // ---- repr and str -------------------------------------------------------------------------
  const codePoints = (s) => Array.from(s);

  /** Python's repr of a float: the shortest digits that read back, fixed between 1e-4 and 1e16. */
  function reprFloat(x) {
    x = +x;
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    const [mantissa, exponent] = x.toExponential().split("e");
    const sign = mantissa.startsWith("-") ? "-" : "";
    const digits = mantissa.replace("-", "").replace(".", "");
    const e = Number(exponent);
    if (e < -4 || e >= 16) {
      const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
      return `${sign}${body}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
    }
    if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
    const whole = digits.slice(0, e + 1).padEnd(e + 1, "0");
    const fraction = digits.slice(e + 1);
    return `${sign}${whole}.${fraction || "0"}`;
  }

  const PRINTABLE_NOT = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

  function reprString(s) {
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = quote;
    for (const ch of codePoints(s)) {
      const code = ch.codePointAt(0);
      if (ch === quote || ch === "\\") out += `\\${ch}`;
      else if (ch === "\t") out += "\\t";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
      else if (code >= 0x7f && ch !== " " && PRINTABLE_NOT.test(ch)) {
        out += code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}`
          : code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
      } else out += ch;
    }
    return out + quote;
  }

  function repr(v) {
    if (isNone(v)) return "None";
    if (isBool(v)) return v ? "True" : "False";
    if (isInt(v)) return String(v);
    if (isFloat(v)) return reprFloat(v);
    if (typeof v === "string") return reprString(v);
    if (isList(v)) return `[${v.map(repr).join(", ")}]`;
    if (v instanceof Map) return `{${[...v].map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(", ")}}`;
    if (isMapping(v)) return `{${Object.keys(v).map((k) => `${repr(k)}: ${repr(v[k])}`).join(", ")}}`;
    return String(v);
  }

  /** `str(v)` (f"{v}"): strings as they are, everything else as repr. */
  const str = (v) => (typeof v === "string" ? v : repr(v));

  /** f"{v!r:.n}": the repr cut to n characters. */
  const reprCut = (v, n) => codePoints(repr(v)).slice(0, n).join("");

  /** Sorted as Python sorts strings (by code point). */
  function sortedStrings(values) {
    const cmp = (a, b) => {
      const x = codePoints(a), y = codePoints(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const d = x[i].codePointAt(0) - y[i].codePointAt(0);
        if (d) return d;
      }
      return x.length - y.length;
    };
    return [...values].sort(cmp);
  }

  // ---- format specs -------------------------------------------------------------------------
  const group = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  // Python rounds a tie (the exact binary value half-way between two decimals) to even; JavaScript's
  // toFixed/toExponential round it away from zero. `digits` is the rounded digit string; `exact`
  // the value's digits to 100 places; `kept` how many of them the rounding keeps.
  function halfEven(rounded, exact, kept) {
    const rest = exact.slice(kept);
    if (!/^50*$/.test(rest)) return rounded;
    const last = Number(exact[kept - 1] ?? "0");
    return last % 2 === 0 ? exact.slice(0, kept) : rounded;
  }

  /** f"{x:.{d}f}" (with grouping: f"{x:,.{d}f}"). */
  function formatFixed(x, decimals, grouping = false) {
    x = +x;
    if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
    const sign = x < 0 || Object.is(x, -0) ? "-" : "";
    const magnitude = Math.abs(x);
    let whole, fraction;
    if (magnitude >= 1e21) {
      whole = BigInt(magnitude).toString();
      fraction = "0".repeat(decimals);
    } else {
      const plain = (v, d) => v.toFixed(d).replace(".", "");
      const exact = plain(magnitude, 100);
      const intDigits = exact.length - 100;
      const digits = halfEven(plain(magnitude, decimals), exact, intDigits + decimals).padStart(intDigits + decimals, "0");
      whole = digits.slice(0, digits.length - decimals) || "0";
      fraction = digits.slice(digits.length - decimals);
      whole = whole.replace(/^0+(?=\d)/, "");
    }
    const body = (grouping ? group(whole) : whole) + (decimals ? `.${fraction}` : "");
    return sign + body;
  }

  /** f"{x:.{p}g}" (f"{x:g}": p = 6). */
  function formatGeneral(x, precision = 6) {
    x = +x;
    if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
    const p = Math.max(precision, 1);
    const sign = x < 0 || Object.is(x, -0) ? "-" : "";
    const magnitude = Math.abs(x);
    if (magnitude === 0) return `${sign}0`;
    const split = (text) => {
      const [m, e] = text.split("e");
      return [m.replace(".", ""), Number(e)];
    };
    let [digits, e] = split(magnitude.toExponential(p - 1));
    const [exactDigits, exactE] = split(magnitude.toExponential(100));
    if (exactE === e) {
      const even = halfEven(digits, exactDigits, p);
      if (even !== digits) digits = even.padEnd(p, "0");
    }
    if (e >= -4 && e < p) {
      const text = formatFixed(Number(`${digits[0]}.${digits.slice(1)}e${e}`), Math.max(p - 1 - e, 0));
      return sign + (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);
    }
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}`.replace(/0+$/, "").replace(/\.$/, "") : digits;
    return `${sign}${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }

  /** f"{n:,}" of an int. */
  const formatInt = (n) => (typeof n === "bigint" || Number.isInteger(+n) ? (n < 0 ? "-" : "") + group(String(n).replace("-", "")) : formatGeneral(n));

  // ---- posenc/_checks.py --------------------------------------------------------------------
  const big = (v) => (typeof v === "bigint" ? v : BigInt(v));
  const less = (a, b) => (typeof a === "bigint" || typeof b === "bigint" ? big(a) < big(b) : a < b);

  function bitLength(n) {
    n = n < 0n ? -n : n;
    return n === 0n ? 0 : n.toString(2).length;
  }

  /** posenc's _show_int: integers of 30 digits or more are shown by their size. */
  function showInt(value) {
    const n = big(value);
    const magnitude = n < 0n ? -n : n;
    return magnitude < 10n ** 30n ? String(n) : `${n < 0n ? "-" : ""}an integer of ${bitLength(n)} bits`;
  }

  /** An int as a number where it is exact, else a BigInt. */
  const normalInt = (v) => (typeof v === "bigint" && v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v);

  function checkInt(name, value, { minimum = null, maximum = null } = {}) {
    if (!isInt(value)) throw typeError(`${name} must be an integer, got ${typeName(value)} ${repr(value)}`);
    if (minimum !== null && less(value, minimum)) throw valueError(`${name} must be an integer >= ${minimum}, got ${showInt(value)}`);
    if (maximum !== null && less(maximum, value)) throw valueError(`${name} must be an integer <= ${maximum}, got ${showInt(value)}`);
    return normalInt(value);
  }

  function checkEvenDim(name, value) {
    if (!isInt(value)) throw typeError(`${name} must be a positive even integer, got ${typeName(value)} ${repr(value)}`);
    const n = normalInt(value);
    if (less(n, 1) || big(n) % 2n !== 0n) throw valueError(`${name} must be a positive even integer, got ${showInt(n)}`);
    if (less(1 << 24, n)) throw valueError(`${name} must be a positive even integer <= ${1 << 24}, got ${showInt(n)}`);
    return n;
  }

  /** check_float: the bounds are Python floats (printed as such). */
  function checkFloat(name, value, { positive = false, minimum = null, maximum = null } = {}) {
    if (isBool(value) || !isReal(value)) throw typeError(`${name} must be a real number, got ${typeName(value)} ${repr(value)}`);
    const result = toNumber(value);
    if (typeof value === "bigint" && !Number.isFinite(result)) throw valueError(`${name} must be finite, got ${reprCut(value, 40)}`);
    if (!Number.isFinite(result)) throw valueError(`${name} must be finite, got ${reprFloat(result)}`);
    if (positive && result <= 0) throw valueError(`${name} must be > 0, got ${reprFloat(result)}`);
    if (minimum !== null && result < minimum) throw valueError(`${name} must be >= ${reprFloat(minimum)}, got ${reprFloat(result)}`);
    if (maximum !== null && result > maximum) throw valueError(`${name} must be <= ${reprFloat(maximum)}, got ${reprFloat(result)}`);
    return result;
  }

  function checkChoice(name, value, allowed) {
    if (typeof value !== "string" || !allowed.includes(value)) {
      throw valueError(`${name} must be one of ${allowed.map(repr).join(", ")}, got ${repr(value)}`);
    }
    return value;
  }

  function checkBool(name, value) {
    if (!isBool(value)) throw typeError(`${name} must be a bool (True or False), got ${typeName(value)} ${reprCut(value, 60)}`);
    return value;
  }

  global.posencPython = Object.freeze({
    PyError, valueError, typeError,
    isBool, isInt, isFloat, isReal, isList, isMapping, isNone, typeName, get, has, keys, truthy, toNumber, equal,
    deepCopy, setKey, repr, reprFloat, str, reprCut, sortedStrings, codePoints,
    formatFixed, formatGeneral, formatInt, showInt, normalInt, less, big,
    checkInt, checkEvenDim, checkFloat, checkChoice, checkBool,
  });
})(typeof window !== "undefined" ? window : globalThis);
