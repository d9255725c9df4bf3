// A config's JSON text read into the values Python's json.loads gives (pyvalues.js describes
// them): "8.0" a float and "8" an int, integers past 2^53 exact, NaN and Infinity read, a repeated
// key keeping its first place and its last value. JSON.parse would lose the first three, and posenc's
// checks depend on them. Text that is not JSON is refused with a ValueError "not JSON (...)" of
// this file's own wording: the tests compare the kind of error with Python's, not the text
// (tests/site/check_inspector.py, error_kind).
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, setKey, normalInt } = P;

  // One token after optional JSON whitespace (Python's: space, tab, newline, return; no BOM).
  const TOKEN = new RegExp('[ \\t\\n\\r]*(?:("(?:[^"\\\\\\u0000-\\u001f]|\\\\["\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*")|' +
    "(-?(?:0|[1-9]\\d*)(\\.\\d+)?([eE][-+]?\\d+)?)|(NaN|-?Infinity|true|false|null)|([{}\\[\\]:,]))", "y");
  const WORDS = { NaN, Infinity, "-Infinity": -Infinity, true: true, false: false, null: null };
  // Python's decoder recurses once per level and posenc.inspect reports its RecursionError as "not
  // JSON (nested too deeply)"; this reader stops at a fixed depth with the same words.
  const MAX_DEPTH = 1000;
  const MAX_DIGITS = 4300; // Python's limit on an integer's digits (int_max_str_digits)

  function notJSON(text, at, what) {
    const before = text.slice(0, at);
    const line = before.split("\n").length;
    return valueError(`not JSON (${what} at line ${line}, column ${at - before.lastIndexOf("\n")})`);
  }

  /** The tokens of the text, each [kind, text, start]; kind: string, number, word or mark. */
  function tokens(text) {
    const out = [];
    TOKEN.lastIndex = 0;
    for (;;) {
      const start = TOKEN.lastIndex;
      const m = TOKEN.exec(text);
      if (!m) {
        const at = start + text.slice(start).search(/[^ \t\n\r]|$/);
        if (at < text.length) {
          throw notJSON(text, at, text[at] === '"' ? "a string cut short, or with a bad escape or a control character"
            : `unexpected ${JSON.stringify(text[at])}`);
        }
        return out;
      }
      const kind = m[1] ? "string" : m[2] ? "number" : m[5] ? "word" : "mark";
      out.push([kind, m[1] || m[2] || m[5] || m[6], TOKEN.lastIndex - m[0].length + m[0].search(/[^ \t\n\r]/), m]);
    }
  }

  function number([, text, at, m], source) {
    if (m[3] || m[4]) {
      const value = Number(text); // an integral float stays a float: a Number object (pyvalues.js)
      return Number.isInteger(value) ? new Number(value) : value; // eslint-disable-line no-new-wrappers
    }
    if (m[2].replace("-", "").length > MAX_DIGITS) throw notJSON(source, at, `an integer of more than ${MAX_DIGITS} digits`);
    return normalInt(BigInt(text));
  }

  /** json.loads(text), with Python's values (see the top of this file). */
  function parseJSON(text) {
    const list = tokens(text);
    let i = 0;
    const expect = (what) => {
      const token = list[i];
      if (!token) throw notJSON(text, text.length, `${what} expected, the text ends`);
      return token;
    };
    const fail = (token, what) => notJSON(text, token[2], `${what} expected, got ${token[1].slice(0, 20)}`);

    function value(depth) {
      if (depth > MAX_DEPTH) throw valueError("not JSON (nested too deeply)");
      const token = expect("a value");
      i += 1;
      const [kind, tokenText] = token;
      if (kind === "string") return JSON.parse(tokenText);
      if (kind === "number") return number(token, text);
      if (kind === "word") return WORDS[tokenText];
      if (tokenText === "[") {
        const out = [];
        return items("]", () => out.push(value(depth + 1)), out);
      }
      if (tokenText === "{") {
        const out = {};
        return items("}", () => {
          const key = expect("a key in double quotes");
          if (key[0] !== "string") throw fail(key, "a key in double quotes");
          i += 1;
          const colon = expect("':'");
          if (colon[1] !== ":") throw fail(colon, "':'");
          i += 1;
          setKey(out, JSON.parse(key[1]), value(depth + 1));
        }, out);
      }
      throw fail(token, "a value");
    }

    // The items of a list or an object up to its closing mark, separated by commas.
    function items(close, item, out) {
      if (expect(`an item or '${close}'`)[1] === close) {
        i += 1;
        return out;
      }
      for (;;) {
        item();
        const next = expect(`',' or '${close}'`);
        i += 1;
        if (next[1] === close) return out;
        if (next[1] !== ",") throw fail(next, `',' or '${close}'`);
      }
    }

    const result = value(0);
    if (i < list.length) throw fail(list[i], "the end of the text");
    return result;
  }

  global.posencJSON = Object.freeze({ parseJSON });
})(typeof window !== "undefined" ? window : globalThis);
