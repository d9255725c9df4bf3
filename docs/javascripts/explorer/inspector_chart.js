// The config inspector's chart (inspector.js draws the rest): for one kind of layer, the wavelength
// of each rotation pair on a log scale, with and without the config's scaling, against the trained and
// declared contexts, the length the scaling rule reaches, the window and the chosen length; the pairs
// that never complete a turn within the reach of these layers are circled, and those that never turn
// at all (theta = 0) crossed.
// Also the helpers the inspector's words share with it: `num`, `contexts` and `ruleReach`.
(function () {
  "use strict";
  const W = window.posencExplorerWidgets;
  const { FONT, palette, fmt, minus, plotWidth, styleAxis, axisLabel, superscript } = W.helpers;
  const P = window.posencPython;
  const d3 = window.d3;

  /** A number as the inspector writes it: an int grouped by thousands, a float to 6 significant digits. */
  const num = (v) => (P.isInt(v) ? Number(v).toLocaleString("en-US") : fmt(+v, 6));

  /** How far a window reaches from the query on its shorter side (posenc.configs._windows.reach): the last W
   * tokens (or a chunk of W) reach W - 1 back, W on each side W, a centred W (W - 1) // 2 before. */
  const windowReach = (layer) => (layer.window_sides === "both" ? Number(layer.window) :
    layer.window_sides === "centred" ? Math.floor((Number(layer.window) - 1) / 2) : Number(layer.window) - 1);

  /** [label, n] of the longest context shown (the declared one or the chosen length) when the layer's window
   * reaches across all of it, so that it cuts nothing within it (Qwen2-7B's 131,072 against 32,768); else null. */
  function idleWindow(result, layer) {
    const spans = [["declared context", result.rope.max_position_embeddings], ["chosen length", result.length]]
      .filter(([, n]) => P.truthy(n)).map(([label, n]) => [label, Number(n)]);
    if (layer.window === null || !spans.length) return null;
    const longest = spans.reduce((a, b) => (b[1] > a[1] ? b : a));
    return windowReach(layer) >= longest[1] - 1 ? longest : null;
  }

  /** The length the config's scaling rule reaches where the config declares less, as posenc.inspect compares
   * it ("the rule's"; posenc._zoo_rows._longest, the models table's context): the trained context times the
   * largest factor of a scaled kind of layer. Qwen2.5-7B's YaRN file: 4 x 32,768 = 131,072 against 32,768
   * declared. {length, factor, original}, or null where the declared context is already as long. */
  function ruleReach(rope) {
    const original = rope.original_max_position_embeddings;
    const factors = Object.values(rope.layers).filter((layer) => P.truthy(layer.scaling))
      .map((layer) => (P.has(layer.scaling, "factor") ? P.toNumber(layer.scaling.factor) : 1.0));
    if (!P.truthy(original) || !factors.length) return null;
    const factor = Math.max(...factors);
    const length = Math.trunc(P.toNumber(original) * factor); // Python's int(): toward zero
    const declared = P.truthy(rope.max_position_embeddings) ? P.toNumber(rope.max_position_embeddings) : 0;
    return length > declared ? { length, factor, original: P.toNumber(original) } : null;
  }

  /** inspect's comparison of the slowest pair with each context, and the pairs that turn within it (a window
   * that cuts nothing within the contexts shown is left out). */
  function contexts(result, layer) {
    const { rope, length } = result;
    const window = idleWindow(result, layer) ? null : layer.window;
    const rule = ruleReach(rope);
    return [["trained", rope.original_max_position_embeddings], ["declared", rope.max_position_embeddings],
      ["rule's", rule && rule.length], ["window", window], ["chosen length", length]]
      .filter(([, n]) => P.truthy(n)).map(([label, n]) => [label, Number(n)]);
  }

  /** The chart of one kind of layer, appended to `holder`; `data` holds its wavelengths (Infinity: theta = 0)
   * and its unscaled frequencies, `result` the reading (contexts and length). */
  function chart(box, holder, name, layer, data, result) {
    const H = 270;
    const colours = palette();
    const svg = d3.select(holder).append("svg").attr("class", "posenc-explorer__plot").attr("role", "img").attr("height", H);
    const width = plotWidth(box);
    svg.attr("width", width);
    const pairs = data.wavelengths.length;
    const m = { left: 58, right: 14, top: width < 640 ? 58 : 40, bottom: 40 }; // the legend takes two rows when narrow
    const lines = contexts(result, layer);
    const window = idleWindow(result, layer) ? null : layer.window;
    const reach = Number([window, result.length, result.rope.max_position_embeddings].find(P.truthy) ?? 0);
    const finite = data.wavelengths.filter(Number.isFinite);
    const top = Math.max(d3.max(finite) || 1, d3.max(data.unscaled.map((t) => (2 * Math.PI) / t)), ...lines.map(([, n]) => n)) * 3;
    const x = d3.scaleLinear().domain(pairs > 1 ? [0, pairs - 1] : [-0.5, 0.5]).range([m.left, width - m.right]);
    const y = d3.scaleLog().domain([1, top]).range([H - m.bottom, m.top]);
    const decades = d3.range(0, Math.floor(Math.log10(top)) + 1).map((e) => Math.pow(10, e));
    const step = Math.ceil(decades.length / 6);
    svg.append("g").selectAll("line").data(decades).join("line").attr("x1", m.left).attr("x2", width - m.right)
      .attr("y1", y).attr("y2", y).attr("stroke", colours.grid);
    styleAxis(svg.append("g").attr("transform", `translate(0,${H - m.bottom})`)
      .call(d3.axisBottom(x).ticks(Math.min(8, pairs, width / 70)).tickFormat(d3.format("d"))), colours);
    styleAxis(svg.append("g").attr("transform", `translate(${m.left},0)`)
      .call(d3.axisLeft(y).tickValues(decades.filter((_, k) => k % step === 0)).tickFormat((v) => `10${superscript(Math.log10(v))}`)), colours);
    axisLabel(svg, colours, "pair index i", (m.left + width - m.right) / 2, H - 6);
    axisLabel(svg, colours, "wavelength (positions)", 14, (m.top + H - m.bottom) / 2, true);
    const dashes = { trained: "6 4", declared: "2 3", "rule's": "12 4", window: "9 3 2 3", "chosen length": "1 4" };
    // labels at the left, where the wavelengths are short; a label that would touch the one below goes right;
    // lines of one length share a label ("trained, declared 32,768")
    const sorted = [...lines].sort((a, b) => a[1] - b[1]);
    for (const [label, n] of sorted) {
      svg.append("line").attr("x1", m.left).attr("x2", width - m.right).attr("y1", y(n)).attr("y2", y(n))
        .attr("stroke", colours.muted).attr("stroke-dasharray", dashes[label]).attr("stroke-width", 1.5);
    }
    const names = svg.append("g"); // raised over the data below, on a halo of the page's colour
    let below = Infinity;
    [...new Set(sorted.map(([, n]) => n))].forEach((n) => {
      const right = below - y(n) < FONT + 3;
      names.append("text").attr("x", right ? width - m.right - 4 : m.left + 4).attr("y", y(n) - 4)
        .attr("text-anchor", right ? "end" : "start").attr("fill", colours.fg).attr("font-size", FONT)
        .style("paint-order", "stroke").style("stroke", "var(--md-default-bg-color)").style("stroke-width", "3px")
        .style("stroke-linejoin", "round")
        .text(`${sorted.filter(([, k]) => k === n).map(([label]) => label).join(", ")} ${num(n)}`);
      if (!right) below = y(n);
    });
    const path = d3.line().defined(Number.isFinite).x((_, i) => x(i)).y((v) => y(v));
    const scaled = layer.scaling !== null;
    if (scaled) {
      svg.append("path").datum(data.unscaled.map((t) => (2 * Math.PI) / t)).attr("fill", "none").attr("stroke", colours.muted)
        .attr("stroke-width", 1.5).attr("stroke-dasharray", "5 3").attr("d", path);
    }
    svg.append("path").datum(data.wavelengths).attr("fill", "none").attr("stroke", colours.cycle[0]).attr("stroke-width", 2).attr("d", path);
    const never = data.wavelengths.map((w, i) => [w, i]).filter(([w]) => Number.isFinite(w) && reach && w > reach);
    const still = data.wavelengths.map((w, i) => [w, i]).filter(([w]) => !Number.isFinite(w));
    svg.append("g").selectAll("circle").data(never).join("circle").attr("cx", ([, i]) => x(i)).attr("cy", ([w]) => y(w))
      .attr("r", 3.2).attr("fill", "none").attr("stroke", colours.cycle[1]).attr("stroke-width", 1.5);
    svg.append("g").selectAll("text").data(still).join("text").attr("x", ([, i]) => x(i)).attr("y", m.top + 4)
      .attr("text-anchor", "middle").attr("fill", colours.cycle[1]).attr("font-size", FONT).text("\u00d7");
    names.raise();
    const legend = [["this config", colours.cycle[0], null, "line"]];
    if (scaled) legend.push(["without scaling", colours.muted, "5 3", "line"]);
    if (never.length) legend.push([`never turns within ${num(reach)}`, colours.cycle[1], null, "circle"]);
    if (still.length) legend.push(["never turns (\u03b8 = 0)", colours.cycle[1], null, "cross"]);
    let lx = m.left, ly = 14;
    legend.forEach(([text, colour, dash, kind]) => {
      const g = svg.append("g");
      if (kind === "line") g.append("line").attr("x2", 20).attr("stroke", colour).attr("stroke-width", 2).attr("stroke-dasharray", dash);
      else if (kind === "circle") g.append("circle").attr("cx", 10).attr("r", 3.2).attr("fill", "none").attr("stroke", colour).attr("stroke-width", 1.5);
      else g.append("text").attr("x", 10).attr("y", 4).attr("text-anchor", "middle").attr("fill", colour).attr("font-size", FONT).text("\u00d7");
      const label = g.append("text").attr("x", 25).attr("y", 4).attr("fill", colours.fg).attr("font-size", FONT).text(text);
      const used = 25 + label.node().getComputedTextLength() + 16;
      if (lx + used > width - m.right && lx > m.left) { // on to the next row
        lx = m.left;
        ly += 17;
      }
      g.attr("transform", `translate(${lx},${ly})`);
      lx += used;
    });
    svg.attr("aria-label", minus(`Log-scale plot of the wavelength of each of the ${pairs} rotation pairs of the ${name} layers` +
      (scaled ? `, with and without ${layer.scaling.type} scaling` : "") +
      (lines.length ? `, against the ${lines.map(([l, n]) => `${l} context ${num(n)}`).join(", ")}` : "") +
      `; ${never.length} pairs never complete a turn within ${num(reach)} positions` +
      (still.length ? `, ${still.length} never turn at all.` : ".")));
  }

  window.posencInspectorChart = Object.freeze({ chart, contexts, idleWindow, num, ruleReach });
})();
