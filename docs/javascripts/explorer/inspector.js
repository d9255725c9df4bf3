// The config inspector: paste or open a model's config.json (or start from a config of posenc's zoo:
// published files, or rebuilt from named sources) and see, per kind of layer, what it does with positions,
// read by the ports of posenc's read_config, rope_inverse_frequencies, rope_attention_scaling and inspect's warnings (rope_config.js
// and friends). Everything runs in the page. Bad input gets one message and the last good result stays.
// This file reads the config and writes the form and the summary line; inspector_results.js (loaded
// before it) writes each kind of layer's settings and the findings, and inspector_chart.js draws each
// kind of layer's wavelengths.
// The last result is kept on the widget element (posencInspector) for tests/site/check_explorer.py.
(function () {
  "use strict";
  const W = window.posencExplorerWidgets;
  const { minus, frame, timed } = W.helpers;
  const P = window.posencPython;
  const C = window.posencRopeConfig;
  const R = window.posencRopeParams;
  const S = window.posencRopeScaling;
  const J = window.posencJSON;
  const E = window.posencRopeEngines;
  const VI = window.posencInspectorVision; // inspector_vision.js: vision and video encoders
  const { num, ruleReach } = window.posencInspectorChart; // inspector_chart.js
  const ZOO = window.posencRopeData.zoo;
  const DEFAULT = "llama-3.1-8b";
  const MAX_FILE_BYTES = 4 << 20;
  let counter = 0;

  // the widths of heads: inspector_words.js; each layer's section, the findings and the engines:
  // inspector_results.js
  const { headWidth } = window.posencInspectorWords;
  const { count, base, still, el, layerSection, findings, enginesList } = window.posencInspectorResults;

  // ---- reading ------------------------------------------------------------------------------
  function parseLength(text) {
    const trimmed = text.trim();
    if (!trimmed) return null;
    if (!/^[+-]?\d+$/.test(trimmed)) throw P.valueError(`argument --length: invalid int value: ${P.repr(text)}`);
    return P.normalInt(BigInt(trimmed));
  }

  /** Everything the widget shows, from the text, or an error with posenc's message. ``readAs``: the model type
   * a zoo file chosen from the menu is read as (its _read_as), or null. */
  function read(text, layout, lengthText, readAs = null) {
    const length = parseLength(lengthText);
    let config = J.parseJSON(text); // text that is not JSON: "not JSON (...)", as python -m posenc.inspect says
    // as python -m posenc.inspect: nesting past read_config's limit is "not JSON" too, however deep
    if (R.tooDeep(config)) throw P.valueError("not JSON (nested too deeply)");
    if (!P.isMapping(config)) throw P.typeError(`the text must hold a JSON object (a config.json), got a ${P.typeName(config)}`);
    const renamed = readAs === null ? null : { from: P.get(config, "model_type"), to: readAs };
    if (renamed) config = Object.assign(Object.create(null), config, { model_type: readAs }); // as posenc/_zoo_rows.py
    const { vision, visionError } = VI.readVision(config);
    const visionOnly = (textError) => ({ rope: null, warnings: [], engines: { warnings: [], layouts: [] }, layers: {}, length,
      config, vision, visionError, textError });
    if (VI.isEncoder(config)) { // read_config refuses an encoder, naming read_vision_config: that reading is the answer
      if (visionError) throw visionError;
      return visionOnly(null);
    }
    let rope; // a parent whose language model posenc refuses (GLM-4V's layout, ...) still shows its encoder's reading
    try { rope = C.readConfig(config, layout || null); } catch (error) { if (!vision || !(error instanceof P.PyError)) throw error; return visionOnly(error); }
    const warnings = C.warningsFor(rope, length, config);
    const layers = {};
    for (const [name, layer] of Object.entries(rope.layers)) {
      if (!layer.rotates) continue;
      const kwargs = C.rotaryKwargs(layer);
      const theta = S.ropeInverseFrequencies(kwargs.dim, kwargs.base, kwargs.scaling, length, kwargs.rotary_dim);
      const unscaled = S.ropeInverseFrequencies(kwargs.dim, kwargs.base, null, null, kwargs.rotary_dim);
      layers[name] = { kwargs, theta, unscaled, attention_factor: S.ropeAttentionScaling(kwargs.scaling),
        wavelengths: theta.map((t) => (t > 0 ? (2 * Math.PI) / t : Infinity)) };
    }
    const rotating = Object.values(rope.layers).filter((layer) => layer.rotates);
    const engines = { warnings: E.engineWarnings(rope.model_type, rotating.map((layer) => layer.scaling)),
      layouts: [...new Set(rotating.map((layer) => layer.layout).filter(Boolean))] };
    return { rope, warnings, engines, layers, length, config, vision, visionError, renamed };
  }

  /** The model type a zoo file is read as when chosen from the menu: its _read_as (a model type transformers
   * lacks, run with the code its notes name, as the models table reads it), else null. */
  function readAsOf(name) {
    const entry = ZOO.find((e) => e.name === name);
    const readAs = entry ? JSON.parse(entry.text)._read_as : undefined;
    return typeof readAs === "string" ? readAs : null;
  }

  /** read_config's words for a missing layout are Python's ("pass layout='half' (...)"); here the choice is
   * the Layout menu's. Any other message is shown as posenc words it. */
  const layoutWords = (message) => message.replace(/; pass layout='half' \((.*)\) or layout='interleaved' \((.*)\)$/,
    ": choose half ($1) or interleaved ($2) in the Layout menu above");

  // ---- the widget -----------------------------------------------------------------------------
  function control(parent, labelText, input, hint, wide = false) {
    const id = `posenc-inspector-${++counter}`;
    const row = el("div", `posenc-explorer__control posenc-inspector__control${wide ? " posenc-inspector__control--wide" : ""}`);
    const label = el("label", null, labelText);
    label.htmlFor = id;
    input.id = id;
    row.append(label, input);
    if (hint) {
      const note = el("span", "posenc-explorer__note", hint);
      note.id = `${id}-hint`;
      input.setAttribute("aria-describedby", note.id);
      row.append(note);
    }
    parent.append(row);
    return input;
  }

  function inspector(host) {
    const box = frame(host, "RoPE config inspector");
    box.root.classList.add("posenc-inspector");
    const privacy = el("p", "posenc-explorer__note posenc-inspector__privacy",
      "Everything runs in this page: the config you paste or open is read here, by JavaScript, and is not sent anywhere.");
    box.root.prepend(privacy);
    const zoo = el("select");
    zoo.append(Object.assign(el("option", null, "your own config (pasted or opened)"), { value: "" }));
    const families = new Map();
    for (const entry of ZOO) {
      if (!families.has(entry.family)) families.set(entry.family, []);
      families.get(entry.family).push(entry);
    }
    for (const [family, entries] of families) {
      const group = Object.assign(el("optgroup"), { label: family });
      for (const entry of entries) {
        // some of the zoo's files are published config.json files copied whole; the others are rebuilt (models page)
        const copied = (JSON.parse(entry.text)._provenance || {}).verbatim === true;
        group.append(Object.assign(el("option", null, `${entry.name}${copied ? "" : " (rebuilt)"}`), { value: entry.name }));
      }
      zoo.append(group);
    }
    control(box.controls, "Start from a config of posenc's zoo", zoo,
      "rebuilt: not a published config.json copied whole, but made from one or from its sources", true);
    const file = Object.assign(el("input"), { type: "file", accept: ".json,application/json" });
    control(box.controls, "Open a config.json", file, null, true);
    const layout = el("select");
    for (const [value, text] of [["", "the model type's"], ["half", "half"], ["interleaved", "interleaved"]]) {
      layout.append(Object.assign(el("option", null, text), { value }));
    }
    control(box.controls, "Layout", layout, "if the model type does not say");
    const length = el("input");
    Object.assign(length, { type: "text", inputMode: "numeric", autocomplete: "off", placeholder: "none" });
    control(box.controls, "Sequence length", length, "optional (--length)");
    const textarea = el("textarea", "posenc-inspector__text");
    Object.assign(textarea, { rows: 14, spellcheck: false, autocomplete: "off" });
    textarea.setAttribute("autocapitalize", "off");
    const textRow = control(box.controls, "config.json", textarea);
    textRow.parentElement.classList.add("posenc-inspector__control--text");
    const problem = el("p", "posenc-inspector__problem");
    problem.setAttribute("role", "alert");
    problem.hidden = true;
    box.readout.before(problem);
    const results = el("div", "posenc-inspector__results");
    box.plots.replaceWith(results);
    const state = { result: null, shown: null, error: null, errorName: null, source: null, fileName: null };
    box.root.posencInspector = state;

    function update() {
      try {
        state.result = read(textarea.value, layout.value, length.value, readAsOf(zoo.value));
        state.shown = zoo.value || state.fileName || "your config";
        state.error = null;
        Object.assign(problem, { hidden: true, textContent: "" });
        render();
        const r = state.result;
        if (!r.rope) return void (box.readout.textContent = minus(`Read ${state.shown}: ${VI.readout(r.vision)}.` +
          (r.textError ? " Its language model is not read." : "")));
        const kinds = Object.keys(r.rope.layers).length;
        let all = {};
        try { all = R.rotarySites(r.config, r.rope); } catch (error) { /* said in the layer's table */ }
        const layers = Object.entries(r.rope.layers).map(([n, l]) => `${n} ${l.rotates ? `rotates ${num(l.rotary_dim)} of ` +
          `${num(headWidth(l, all[n] || []))} features` + (still(r.layers[n]) ? ` (${num(r.layers[n].theta.length -
          still(r.layers[n]))} of ${num(r.layers[n].theta.length)} pairs turn)` : "") + `, base ${base(l.base)}` : "does not rotate"}`);
        // the pasted model type, and the one read where that is its text model's (VideoLLaMA 3: qwen2), or the
        // one a zoo file is read as (Kimi K2: deepseek_v3)
        const given = P.get(r.config, "model_type");
        const type = r.renamed ? `${r.renamed.from} (read as ${r.renamed.to}, as the models table reads this zoo file)` :
          typeof given === "string" && given !== r.rope.model_type ?
            `${given} (its text model read as ${r.rope.model_type})` : r.rope.model_type;
        box.readout.textContent = minus(`Read ${state.shown}: model type ${type}, ` +
          `${kinds === 1 ? "one kind of layer" : `${kinds} kinds of layer`}${r.rope.sinks ? ", attention sinks" : ""}` +
          (r.rope.max_position_embeddings !== null ? `; declared context ${num(r.rope.max_position_embeddings)}` : "") +
          (r.rope.original_max_position_embeddings !== null ? `, trained ${num(r.rope.original_max_position_embeddings)}` : "") +
          (ruleReach(r.rope) ? `, reached by the scaling rule ${num(ruleReach(r.rope).length)}` : "") +
          `. ${layers.join("; ")}. ${r.warnings.length ? count(r.warnings.length, "warning") : "No warnings"}.` +
          (r.vision ? ` Its ${VI.readout(r.vision)}.` : ""));
      } catch (error) {
        if (!(error instanceof P.PyError)) throw error;
        state.error = error.message;
        state.errorName = error.name;
        problem.textContent = `Not read: ${layoutWords(error.message)}.` + (state.result ? ` Still showing ${state.shown}.` : "");
        problem.hidden = false;
        results.classList.toggle("posenc-inspector__results--stale", state.result !== null);
      }
    }

    function render() {
      results.classList.remove("posenc-inspector__results--stale");
      results.replaceChildren();
      const r = state.result;
      if (!r) return;
      if (!r.rope) return VI.render(el, results, r);
      for (const [name, layer] of Object.entries(r.rope.layers)) layerSection(box, results, name, layer, r);
      const found = findings(r); // about the language model: before the vision encoder's section
      if (found.children.length) results.append(el("h3", null, "Findings"), found);
      results.append(el("h3", null, "In other engines"), enginesList(r.engines));
      VI.render(el, results, r);
    }

    let pending = null;
    const later = () => {
      clearTimeout(pending);
      pending = setTimeout(() => redraw(), 300);
    };
    const redraw = timed(box, () => (state.source === textarea.value + layout.value + length.value ? render() : reread()));
    function reread() {
      state.source = textarea.value + layout.value + length.value;
      update();
    }
    function choose(name) {
      const entry = ZOO.find((e) => e.name === name);
      if (entry) textarea.value = entry.text;
      state.source = null; // read again: the same text may be read as another model type (readAsOf)
      redraw();
    }
    zoo.addEventListener("change", () => {
      state.fileName = null;
      choose(zoo.value);
    });
    textarea.addEventListener("input", () => {
      zoo.value = "";
      state.fileName = null;
      later();
    });
    layout.addEventListener("change", () => redraw());
    length.addEventListener("input", later);
    file.addEventListener("change", async () => {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      if (chosen.size > MAX_FILE_BYTES) {
        problem.textContent = `Not read: ${chosen.name} holds ${(chosen.size / 1e6).toFixed(1)} MB; a config.json is a few kB.`;
        problem.hidden = false;
        return;
      }
      const text = (await chosen.text()).replace(/\r\n?/g, "\n"); // as Python's open() reads it
      zoo.value = "";
      textarea.value = text;
      state.fileName = chosen.name;
      redraw();
    });
    zoo.value = DEFAULT;
    textarea.value = (ZOO.find((e) => e.name === DEFAULT) || ZOO[0]).text;
    return redraw;
  }

  W.register("rope-inspector", inspector);
})();
