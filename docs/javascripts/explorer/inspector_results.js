// The config inspector's results (inspector.js reads the config and builds the form): for a reading,
// a section per kind of layer (its settings, the chart of its wavelengths and a caption), the findings
// (warnings and what they mean, one line per fact) and what other engines call the layout or compute
// otherwise. The words of each finding and of windows and widths are inspector_words.js's; the chart
// is inspector_chart.js's. Loaded after both, before inspector.js.
(function () {
  "use strict";
  const { fmt, minus } = window.posencExplorerWidgets.helpers;
  const P = window.posencPython;
  const C = window.posencRopeConfig;
  const R = window.posencRopeParams;
  const E = window.posencRopeEngines;
  const { chart, contexts, idleWindow, num, ruleReach } = window.posencInspectorChart; // inspector_chart.js
  const { MEANINGS, FACTS, NOT_ROTATED, notAttention, windowWords, idleWords, windowFact, headWidth, warningNodes, link } =
    window.posencInspectorWords;

  // ---- words ----------------------------------------------------------------------------------
  const count = (n, word) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
  const isInteger = (v) => Number.isInteger(+v) && Math.abs(+v) < 1e15;
  const base = (v) => (isInteger(v) ? Number(v).toLocaleString("en-US") : fmt(+v, 6));

  function scalingWords(scaling) {
    if (!scaling) return "none";
    const names = { original_max_position_embeddings: "trained context", max_position_embeddings: "extended context" };
    const parts = Object.entries(scaling).filter(([k, v]) => k !== "type" && k !== "factor" && !Array.isArray(v))
      .map(([k, v]) => `${names[k] || k} ${typeof v === "boolean" ? v : num(v)}`);
    const lists = Object.entries(scaling).filter(([, v]) => Array.isArray(v)).map(([k, v]) => `${k}: ${v.length} numbers`);
    const factor = scaling.factor !== undefined && scaling.factor !== null ? `, factor ${num(scaling.factor)}` : "";
    return `${scaling.type}${factor}` + (parts.length || lists.length ? ` (${[...parts, ...lists].join(", ")})` : "");
  }

  function temperatureWords(t, position) {
    if (!t) return "none";
    const at = position === null ? "" : `; at position ${num(position)}: \u00d7${C.queryTemperature(t, position).toFixed(4)}`;
    if (t.rule === "llama_4_scaling_beta") {
      return `1 + ${P.formatGeneral(t.beta)} ln(1 + floor(p / ${num(t.length)})), after the rotation (Ministral's llama_4_scaling_beta)${at}`;
    }
    return `${P.formatGeneral(t.attn_scale)} ln(1 + floor((p + 1) / ${num(t.floor_scale)})) + 1 (Llama 4's temperature tuning of NoPE layers)${at}`;
  }

  /** The length the scaling rule reaches past the declared context (inspector_chart.js ruleReach), said
   * after the rule: Qwen2.5-7B's YaRN file, "reached by the rule: 131,072 (4 x 32,768)". */
  const reachWords = (rope) => {
    const rule = ruleReach(rope);
    return rule ? `; reached by the rule: ${num(rule.length)} (${num(rule.factor)} \u00d7 ${num(rule.original)})` : "";
  };

  /** The length a length-dependent rule's frequencies are shown for (LongRoPE, dynamic NTK), in
   * posenc.inspect's words (_at_length), else "". */
  function atLength(layer, rope, length) {
    if (!P.truthy(layer.scaling) || !["dynamic", "longrope"].includes(layer.scaling.type)) return "";
    if (P.truthy(length)) return ` at a length of ${num(length)}`;
    const short = rope.original_max_position_embeddings;
    return P.truthy(short) ? ` for inputs up to ${num(short)} tokens` : " for short inputs";
  }

  /** The words of a kind of layer posenc names itself: read_config adds ":nope" to the layers of a type
   * whose entry in no_rope_layers is 0 where others of the type rotate (SmolLM3's full_attention:nope). */
  const ownName = (name) => (name.endsWith(":nope") ? `posenc's name for the ${name.slice(0, -5)} layers whose ` +
    "entry in no_rope_layers is 0; the config calls them " + name.slice(0, -5) : null);

  /** How many of a layer's pairs never turn (theta = 0: p-RoPE's still pairs). */
  const still = (data) => data.theta.filter((t) => t === 0).length;

  const within = (label, n, keys) => (label === "window" ? `window of ${num(n)}${keys}` : label === "chosen length" ?
    `chosen length ${num(n)}` : `${label} context`);

  // ---- drawing --------------------------------------------------------------------------------
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  function factItem(list, [meaning, href], label) {
    const item = el("li", "posenc-inspector__fact");
    item.append(el("strong", null, `${label}: `), document.createTextNode(`${meaning} `));
    const a = el("a", null, "Read more");
    a.href = href;
    a.setAttribute("aria-label", `Read more: ${label}`);
    item.append(a);
    list.append(item);
  }

  function layerSection(box, parent, name, layer, result) {
    const section = el("section", "posenc-inspector__layer");
    parent.append(section);
    const heading = el("h3", null, `${name}${layer.layers.length ? ` (${count(layer.layers.length, "layer")})` : ""}`);
    section.append(heading);
    const other = notAttention(name); // a recurrent, convolution or per-token layer: no rotation, window or temperature
    const rows = ownName(name) ? [["Name", ownName(name)]] : [];
    rows.push(["Rotates", other ? NOT_ROTATED[other] : layer.rotates ? "yes" :
      layer.rotates === false ? `no (NoPE)${layer.note ? `; ${layer.note}` : ""}` : `unknown; ${layer.note}`]);
    const data = result.layers[name];
    let sites = [], unread = null;
    try { sites = layer.rotates ? R.rotarySites(result.config, result.rope)[name] || [] : []; } catch (error) { unread = error.message; }
    const head = headWidth(layer, sites); // the query-key head's width where the rotary part is a slice of it
    if (layer.rotates) {
      rows.push(["Layout", layer.layout === "half" ? "half: features i and i + d/2 form a pair" : "interleaved: features 2i and 2i + 1 form a pair"],
        ["Rotated width", `${num(layer.rotary_dim)} of ${num(head)} features (${count(data.theta.length, "pair")}` +
          `${still(data) ? `; ${num(data.theta.length - still(data))} turn, ${num(still(data))} never do: \u03b8 = 0` : ""})` +
          (Number(head) !== Number(layer.dim) ? ", a slice of each query-key head" : "")],
        ["Base", base(layer.base)], ["Scaling", scalingWords(layer.scaling) + (layer.scaling ? reachWords(result.rope) : "")],
        ["Attention factor", `${data.attention_factor.toFixed(4)} on cos and sin`]);
      if (layer.softmax_scale !== 1) rows.push(["Softmax scale", `\u00d7${layer.softmax_scale.toFixed(4)} on 1/sqrt(head_dim)`]);
    }
    const position = result.length !== null ? Number(result.length) - 1
      : result.rope.max_position_embeddings !== null ? Number(result.rope.max_position_embeddings) - 1 : null;
    const idle = idleWindow(result, layer); // a window across the whole context shown cuts nothing
    if (!other) {
      rows.push(["Temperature", temperatureWords(layer.temperature, position)],
        ["Window", windowWords(name, layer, result.rope, sites) + (idle ? idleWords(idle) : "")]);
    }
    if (unread !== null) rows.push(["Sites", `not read: ${unread}`]);
    // a line per rotary site of a layer that rotates at more than one (posenc-inspect's "site" lines; rope_sites.js)
    for (const s of sites.length > 1 ? sites : []) {
      rows.push([`Site: ${s.name}`, `turns the ${s.features} ${num(s.width)} of ${num(s.head_dim)} features in ${s.layout} pairs` +
        (s.positions === "window start" ? ", at the position of its window's first token" : "") + (s.inverse ? ", turned back (minus the angle)" : "")]);
    }
    const list = el("dl", "posenc-inspector__settings");
    for (const [term, value] of rows) list.append(el("dt", null, term), el("dd", null, minus(value)));
    section.append(list);
    if (layer.rotates) {
      const holder = el("div", "posenc-explorer__plots");
      section.append(holder);
      box.plots = holder; // plotWidth reads it
      chart(box, holder, name, layer, data, result);
      const finite = data.wavelengths.filter(Number.isFinite);
      const lines = contexts(result, layer);
      const compressed = sites.some((s) => s.name === "compressor") ? " uncompressed keys" : ""; // DeepSeek-V4
      const slowest = finite.length ? Math.max(...finite) : null;
      const words = slowest === null ? "No pair turns." :
        `Slowest pair${atLength(layer, result.rope, result.length)}: one turn per ${fmt(slowest, 3)} positions` +
        (lines.length ? ` (${lines.map(([l, n]) => `${fmt(slowest / n, 3)}\u00d7 the ${l} ${num(n)}`).join(", ")}). ` : ". ") +
        lines.map(([l, n]) => `Pairs completing a turn within the ${within(l, n, compressed)}: ${finite.filter((w) => w <= n).length} ` +
          `of ${finite.length}${still(data) ? " that turn" : ""}.`).join(" ");
      section.append(el("p", "posenc-inspector__caption", minus(words)));
    }
  }

  function findings(result) {
    const list = el("ul", "posenc-inspector__findings");
    for (const warning of result.warnings) {
      const item = el("li", "posenc-inspector__warning");
      const [, meaning, href] = MEANINGS.find(([pattern]) => pattern.test(warning));
      item.append(el("strong", null, "Warning: "), ...warningNodes(el, warning), el("br"),
        document.createTextNode(`What this means: ${meaning} `));
      const a = el("a", null, "Read more");
      a.href = href;
      a.setAttribute("aria-label", `Read more about: ${warning.slice(0, 60)}`);
      item.append(a);
      list.append(item);
    }
    let all = {};
    try { all = R.rotarySites(result.config, result.rope); } catch (error) { /* said in the layer's table */ }
    const sitesOf = (name) => all[name] || [];
    const facts = new Map(); // one line per fact, naming every kind of layer it holds for
    const fact = (what, detail, name) => {
      const key = `${detail}\u0000${FACTS[what][1]}`;
      if (!facts.has(key)) facts.set(key, { what, detail, names: [] });
      facts.get(key).names.push(name);
    };
    for (const [name, layer] of Object.entries(result.rope.layers)) {
      if (notAttention(name)) { // not attention: what carries order in it, and nothing of windows or temperatures
        fact(notAttention(name), "not attention", name);
        continue;
      }
      if (layer.rotates === false) fact("nope", "no rotation", name);
      if (layer.rotates === null) fact("unknown", "unknown layer type", name);
      const idle = idleWindow(result, layer);
      if (idle) fact("window_idle", `${windowFact(layer, sitesOf(name))[1]}, no effect within the ${idle[0]} ${num(idle[1])}`, name);
      else if (layer.window !== null) fact(...windowFact(layer, sitesOf(name)), name);
      if (layer.temperature) fact("temperature", "query temperature", name);
      if (!layer.rotates) continue;
      if (layer.scaling && layer.scaling.type === "proportional") fact("proportional", "p-RoPE", name);
      else if (Number(layer.rotary_dim) !== Number(headWidth(layer, sitesOf(name)))) {
        fact("partial", `${num(layer.rotary_dim)} of ${num(headWidth(layer, sitesOf(name)))} features rotate`, name);
      }
      if (layer.attention_factor !== 1) fact("attention", `attention factor ${layer.attention_factor.toFixed(4)}`, name);
      if (layer.softmax_scale !== 1) fact("softmax", `softmax scale \u00d7${layer.softmax_scale.toFixed(4)}`, name);
    }
    for (const { what, detail, names } of facts.values()) factItem(list, FACTS[what], `${names.join(", ")}: ${detail}`);
    if (result.rope.sinks) factItem(list, FACTS.sinks, "attention sinks");
    return list;
  }

  /** What each engine calls the layout, then the engines known to compute this config otherwise
   * (posenc.inspect --engines; the data and its rules: posenc/engines.py, rope_engines.js). */
  function enginesList({ warnings, layouts }) {
    const list = el("ul", "posenc-inspector__findings posenc-inspector__engines");
    for (const layout of layouts) {
      const item = el("li", "posenc-inspector__fact");
      item.append(el("strong", null, `${layout}: `), document.createTextNode(E.layoutFlags(layout).map(([name, flag]) =>
        `${name} ${flag}`).join("; ")));
      list.append(item);
    }
    for (const warning of warnings) {
      const item = el("li", "posenc-inspector__warning");
      // the terminal's pointer to the page ("(see engines.md#...)") is the link below here
      const pointer = ` (see ${warning.page}#${warning.section})`;
      const text = warning.text.endsWith(pointer) ? warning.text.slice(0, -pointer.length) : warning.text;
      item.append(el("strong", null, "Engine warning: "), ...warningNodes(el, text), el("br"));
      const a = el("a", null, "Read more");
      a.href = link(warning.page.replace(/\.md$/, ""), warning.section);
      a.setAttribute("aria-label", `Read more about: ${warning.text.slice(0, 60)}`);
      item.append(a);
      list.append(item);
    }
    if (!warnings.length) list.append(el("li", "posenc-inspector__fact", "No engine is known to compute this config otherwise."));
    return list;
  }

  window.posencInspectorResults = { count, base, still, el, layerSection, findings, enginesList };
})();
