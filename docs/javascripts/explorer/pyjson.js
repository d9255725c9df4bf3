// Python's json.loads in JavaScript: a port of CPython 3.11's JSON decoder (the C scanner's
// messages and positions), returning the values pyvalues.js describes: NaN, Infinity and -Infinity
// are read, a duplicate key keeps its first place and its last value, "8.0" is a float and "8" an
// int, an integer of more than 4300 digits is Python's ValueError. Errors name the line, column and
// character as Python counts them (in code points), in a ValueError as json.JSONDecodeError's. JSON
// nested past MAX_DEPTH levels is "nested too deeply" (Python's decoder: a RecursionError).
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, codePoints, setKey, normalInt } = P;

  const WHITESPACE = " \t\n\r";
  const NUMBER = /(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?/y;

  function decodeError(message, doc, pos) {
    const before = codePoints(doc.slice(0, pos));
    const lineStart = before.lastIndexOf("\n");
    const error = valueError(`${message}: line ${before.filter((c) => c === "\n").length + 1} column ` +
      `${before.length - lineStart} (char ${before.length})`);
    error.jsonError = true;
    return error;
  }

  function skip(s, i) {
    while (i < s.length && WHITESPACE.includes(s[i])) i++;
    return i;
  }

  function scanString(s, end) {
    const begin = end - 1;
    let out = "";
    for (;;) {
      let i = end;
      while (i < s.length && s[i] !== '"' && s[i] !== "\\" && s.charCodeAt(i) >= 0x20) i++;
      if (i >= s.length) throw decodeError("Unterminated string starting at", s, begin);
      out += s.slice(end, i);
      const terminator = s[i];
      if (terminator === '"') return [out, i + 1];
      if (terminator !== "\\") throw decodeError("Invalid control character at", s, i);
      if (i + 1 >= s.length) throw decodeError("Unterminated string starting at", s, begin);
      const escape = s[i + 1];
      if (escape !== "u") {
        const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[escape];
        if (simple === undefined) throw decodeError("Invalid \\escape", s, i);
        out += simple;
        end = i + 2;
        continue;
      }
      // as CPython's C scanner: four hex digits after "u", and something after them
      const hex = (at) => {
        const text = s.slice(at, at + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(text)) throw decodeError("Invalid \\uXXXX escape", s, at - 1);
        return parseInt(text, 16);
      };
      if (i + 6 >= s.length) throw decodeError("Invalid \\uXXXX escape", s, i + 1);
      let code = hex(i + 2);
      end = i + 6;
      if (code >= 0xd800 && code <= 0xdbff && end + 6 < s.length && s[end] === "\\" && s[end + 1] === "u") {
        const low = hex(end + 2);
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + (((code - 0xd800) << 10) | (low - 0xdc00));
          end += 6;
        }
      }
      out += String.fromCodePoint(code);
    }
  }

  function scanOnce(s, i, depth) {
    if (i >= s.length) return null;
    const c = s[i];
    if (c === '"') return scanString(s, i + 1);
    if (c === "{") return scanObject(s, i + 1, depth + 1);
    if (c === "[") return scanArray(s, i + 1, depth + 1);
    if (c === "n" && s.startsWith("null", i)) return [null, i + 4];
    if (c === "t" && s.startsWith("true", i)) return [true, i + 4];
    if (c === "f" && s.startsWith("false", i)) return [false, i + 5];
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(s);
    if (m) {
      const [text, integer, fraction, exponent] = m;
      if (fraction || exponent) {
        const value = Number(text);
        return [Number.isInteger(value) ? new Number(value) : value, i + text.length]; // eslint-disable-line no-new-wrappers
      }
      const length = integer.replace("-", "").length;
      if (length > 4300) {
        throw valueError(`Exceeds the limit (4300 digits) for integer string conversion: value has ${length} digits; ` +
          "use sys.set_int_max_str_digits() to increase the limit");
      }
      return [normalInt(BigInt(integer)), i + text.length];
    }
    if (c === "N" && s.startsWith("NaN", i)) return [NaN, i + 3];
    if (c === "I" && s.startsWith("Infinity", i)) return [Infinity, i + 8];
    if (c === "-" && s.startsWith("-Infinity", i)) return [-Infinity, i + 9];
    return null;
  }

  // Python's decoder recurses once per level and stops with a RecursionError near its recursion
  // limit (1000 frames, less the caller's); posenc.inspect reports that as "not JSON (nested too
  // deeply)", and so does this decoder, a little later (it counts levels, not frames).
  const MAX_DEPTH = 1000;

  function value(s, i, depth) {
    if (depth > MAX_DEPTH) {
      const error = valueError("nested too deeply");
      error.jsonError = true;
      throw error;
    }
    const found = scanOnce(s, i, depth);
    if (found === null) throw decodeError("Expecting value", s, i);
    return found;
  }

  function scanObject(s, end, depth) {
    const out = {};
    end = skip(s, end);
    if (s[end] === "}") return [out, end + 1];
    if (s[end] !== '"') throw decodeError("Expecting property name enclosed in double quotes", s, end);
    for (;;) {
      const [key, afterKey] = scanString(s, end + 1);
      end = skip(s, afterKey);
      if (s[end] !== ":") throw decodeError("Expecting ':' delimiter", s, end);
      const [item, afterValue] = value(s, skip(s, end + 1), depth);
      setKey(out, key, item);
      end = skip(s, afterValue);
      if (s[end] === "}") return [out, end + 1];
      if (s[end] !== ",") throw decodeError("Expecting ',' delimiter", s, end);
      end = skip(s, end + 1);
      if (s[end] !== '"') throw decodeError("Expecting property name enclosed in double quotes", s, end);
    }
  }

  function scanArray(s, end, depth) {
    const out = [];
    end = skip(s, end);
    if (s[end] === "]") return [out, end + 1];
    for (;;) {
      const [item, afterValue] = value(s, end, depth);
      out.push(item);
      end = skip(s, afterValue);
      if (s[end] === "]") return [out, end + 1];
      if (s[end] !== ",") throw decodeError("Expecting ',' delimiter", s, end);
      end = skip(s, end + 1);
    }
  }

  /** json.loads(text), with Python's values (see the top of this file) and Python's errors. */
  function parseJSON(text) {
    if (typeof text !== "string") throw typeError(`the JSON object must be str, bytes or bytearray, not ${P.typeName(text)}`);
    if (text.startsWith("\ufeff")) throw decodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0);
    const [result, end] = value(text, skip(text, 0), 0);
    const rest = skip(text, end);
    if (rest !== text.length) throw decodeError("Extra data", text, rest);
    return result;
  }

  global.posencJSON = Object.freeze({ parseJSON });
})(typeof window !== "undefined" ? window : globalThis);
