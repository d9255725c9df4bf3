// Each inference engine's name for a layout, and the engines known to compute a config otherwise
// than transformers: posenc/engines.py's `layout_flags`, `triggered` and `engine_warnings`, reading
// the data posenc/engines.py gives (`engine_data`, shipped in assets/posenc/rope-data.js as
// `engines`). The rules live in that data; this file only applies them, as the Python does
// (tests/test_explorer_ports.py compares the warnings on every zoo config and every engine case).
(function (global) {
  "use strict";
  const P = global.posencPython;

  const data = () => global.posencRopeData.engines;

  /** posenc's `_same`: equal as JSON values are (a boolean equals only a boolean). */
  const same = (a, b) => P.isBool(a) === P.isBool(b) && P.equal(a, b); // P.equal: Python's ==

  function fires(trigger, settings) {
    if (!P.has(settings, trigger.key)) return false;
    const value = P.get(settings, trigger.key);
    if (trigger.test === "is") return same(value, trigger.value);
    if (trigger.test === "in") return trigger.value.some((v) => same(value, v));
    if (trigger.test === "given") return true;
    if (trigger.test === "not") return !same(value, trigger.value);
    if (trigger.test === "differs") return P.has(settings, trigger.other) && !same(value, P.get(settings, trigger.other));
    const other = P.get(settings, trigger.other); // "alone": the other setting missing, null, false or 0
    return !same(value, trigger.value) && (other === null || other === false || (P.isReal(other) && P.equal(other, 0)));
  }

  /** The triggers a config meets, each once, with the value that fired it. */
  function triggered(modelType, scalings) {
    const pools = scalings.filter(Boolean).map((s) => ({ ...s, rope_type: P.get(s, "type") }));
    const found = [];
    for (const trigger of data().triggers) {
      if (trigger.model_types !== null && !trigger.model_types.includes(modelType)) continue;
      const candidates = trigger.rope_type !== null ? pools.filter((s) => s.rope_type === trigger.rope_type)
        : [{ model_type: modelType }];
      const hit = candidates.find((pool) => fires(trigger, pool));
      if (hit !== undefined) found.push([trigger, P.get(hit, trigger.key)]);
    }
    return found;
  }

  const spell = (v) => (P.isBool(v) ? String(v) : typeof v === "string" ? P.repr(v) : P.str(v));

  /** One warning per known disagreement the config meets (posenc.engines.engine_warnings). */
  function engineWarnings(modelType, scalings) {
    const { engines, features, disagreements, page } = data();
    const shown = new Map();
    for (const [trigger, value] of triggered(modelType, scalings)) {
      let text = `${trigger.key} ${spell(value)}`;
      if (trigger.test === "differs") text = `${trigger.key} differs from ${trigger.other}`;
      else if (trigger.test === "alone") text += ` without ${trigger.other}`;
      const key = `${trigger.engine}\u0000${trigger.feature}`;
      shown.set(key, [...(shown.get(key) || []), text]);
    }
    return disagreements.filter((d) => shown.has(`${d.engine}\u0000${d.feature}`)).map((d) => ({
      text: `${engines[d.engine].name} computes this config otherwise (${features[d.feature]}: ` +
        `${shown.get(`${d.engine}\u0000${d.feature}`).join("; ")}): ${d.summary} (see ${page}#${d.section})`,
      page, section: d.section,
    }));
  }

  /** Each engine's name for a layout ("half" or "interleaved"), by engine name; "—" (none) left out. */
  function layoutFlags(layout) {
    return Object.values(data().engines).filter((e) => e[layout] !== "\u2014").map((e) => [e.name, e[layout]]);
  }

  global.posencRopeEngines = Object.freeze({ triggered, engineWarnings, layoutFlags });
})(typeof window !== "undefined" ? window : globalThis);
