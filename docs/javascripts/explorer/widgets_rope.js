// The RoPE widgets, built from the scaffolding of widgets.js (loaded before it) around formulas.js:
//   rope-scaling: the wavelength of every pair before and after a context-extension rule;
//   rope-rotation: a query and a key turned in one pair (or four), with the score they give.
(function () {
  "use strict";
  const F = window.posencExplorer;
  const d3 = window.d3;
  const W = window.posencExplorerWidgets;
  const { FONT, palette, fmt, minus, uid, frame, addControls, button, svgPlot, plotWidth, styleAxis,
    axisLabel, timed, superscript } = W.helpers;

  // ---- RoPE frequencies under scaling -------------------------------------------------------

  const SCALING_TYPES = [
    ["linear", "linear (position interpolation)"],
    ["ntk", "ntk (NTK-aware base)"],
    ["dynamic", "dynamic (dynamic NTK)"],
    ["yarn", "yarn (YaRN)"],
    ["llama3", "llama3 (Llama 3.1)"],
    ["proportional", "proportional (p-RoPE)"],
    ["longrope", "longrope (LongRoPE)"],
  ];

  function scalingFor(values) {
    const { type, factor, trained } = values;
    if (type === "linear" || type === "ntk") return { type, factor };
    if (type === "dynamic") return { type, factor, original_max_position_embeddings: trained };
    if (type === "yarn") {
      return { type, factor, original_max_position_embeddings: trained, beta_fast: values.betaFast, beta_slow: values.betaSlow };
    }
    if (type === "proportional") return { type, factor, partial_rotary_factor: values.fraction };
    if (type === "longrope") {
      // Illustrative lists (real models ship searched ones): 1 for short sequences; past the
      // trained length, factor^(i / (pairs - 1)), from 1 for the fastest pair to factor for the slowest.
      const pairs = values.dim / 2;
      return { type, factor, original_max_position_embeddings: trained,
        short_factor: new Array(pairs).fill(1),
        long_factor: Array.from({ length: pairs }, (_, i) => Math.pow(factor, i / Math.max(pairs - 1, 1))) };
    }
    return { type, factor, original_max_position_embeddings: trained, low_freq_factor: values.low, high_freq_factor: values.high };
  }

  function ropeScaling(host) {
    const box = frame(host, "RoPE frequencies under scaling explorer");
    const controls = addControls(box, [
      { key: "dim", label: "Head dim", kind: "select", value: 128, parse: Number, options: [[32, "32"], [64, "64"], [128, "128"], [256, "256"]] },
      { key: "base", label: "Base", kind: "select", value: 10000, parse: Number,
        options: [[10000, "10,000"], [500000, "500,000 (Llama 3)"], [1000000, "1,000,000"]] },
      { key: "trained", label: "Trained length", kind: "select", value: 4096, parse: Number,
        options: [[2048, "2,048"], [4096, "4,096"], [8192, "8,192"]] },
      { key: "type", label: "Scaling type", kind: "select", value: "yarn", options: SCALING_TYPES },
      { key: "factor", label: "Factor", kind: "range", min: 1, max: 32, step: 1, value: 4, text: (v) => `factor ${v}` },
      { key: "seqLen", label: "Current length", kind: "range", min: 1024, max: 65536, step: 1024, value: 16384,
        text: (v) => `current length ${v}`, show: (v) => v.toLocaleString("en-US") },
      { key: "betaFast", label: "beta_fast", kind: "range", min: 2, max: 64, step: 1, value: 32, text: (v) => `beta fast ${v}` },
      { key: "betaSlow", label: "beta_slow", kind: "range", min: 0.25, max: 1.75, step: 0.25, value: 1, text: (v) => `beta slow ${v}` },
      { key: "low", label: "low_freq_factor", kind: "range", min: 0.5, max: 3, step: 0.5, value: 1, text: (v) => `low frequency factor ${v}` },
      { key: "high", label: "high_freq_factor", kind: "range", min: 3.5, max: 8, step: 0.5, value: 4, text: (v) => `high frequency factor ${v}` },
      { key: "fraction", label: "partial_rotary_factor", kind: "range", min: 0.05, max: 1, step: 0.05, value: 0.5,
        text: (v) => `partial rotary factor ${v}` },
    ], () => redraw());
    const plot = svgPlot(box, 330);
    const H = 330;
    const redraw = timed(box, () => {
      const values = controls.values;
      const { dim, base, trained, type, factor } = values;
      controls.show("seqLen", type === "dynamic" || type === "longrope");
      controls.show("fraction", type === "proportional");
      controls.show("betaFast", type === "yarn");
      controls.show("betaSlow", type === "yarn");
      controls.show("low", type === "llama3");
      controls.show("high", type === "llama3");
      controls.inputs.seqLen.step = String(trained / 4);
      controls.setRange("seqLen", { min: trained / 4, max: trained * 32 });
      const scaling = scalingFor(values);
      const before = F.ropeInverseFrequencies(dim, base, null, null).map((t) => (2 * Math.PI) / t);
      const lengthDependent = type === "dynamic" || type === "longrope";
      const after = F.ropeInverseFrequencies(dim, base, scaling, lengthDependent ? values.seqLen : null).map((t) => (2 * Math.PI) / t);
      const attention = F.ropeAttentionScaling(scaling);
      const extended = lengthDependent ? Math.max(values.seqLen, trained) : trained * factor;
      const colours = palette();
      const width = plotWidth(box);
      plot.attr("width", width).selectAll("*").remove();
      const m = { left: 62, right: 16, top: 28, bottom: 42 };
      const x = d3.scaleLinear().domain([0, dim / 2 - 1]).range([m.left, width - m.right]);
      const finite = after.filter(Number.isFinite); // p-RoPE's pairs that do not turn have no wavelength
      const top = Math.max(d3.max(finite) || 1, d3.max(before), extended) * 2;
      const y = d3.scaleLog().domain([1, top]).range([H - m.bottom, m.top]);
      plot.append("g").selectAll("line").data(y.ticks(6).filter((v) => Math.log10(v) % 1 === 0)).join("line")
        .attr("x1", m.left).attr("x2", width - m.right).attr("y1", y).attr("y2", y).attr("stroke", colours.grid);
      styleAxis(plot.append("g").attr("transform", `translate(0,${H - m.bottom})`).call(d3.axisBottom(x).ticks(Math.min(8, width / 80))), colours);
      styleAxis(plot.append("g").attr("transform", `translate(${m.left},0)`)
        .call(d3.axisLeft(y).tickValues(d3.range(0, Math.floor(Math.log10(top)) + 1).map((e) => Math.pow(10, e)))
          .tickFormat((v) => `10${superscript(Math.log10(v))}`)), colours);
      axisLabel(plot, colours, "pair index i", (m.left + width - m.right) / 2, H - 6);
      axisLabel(plot, colours, "wavelength 2\u03c0/\u03b8\u1d62 (positions)", 14, (m.top + H - m.bottom) / 2, true);
      for (const [length, text, dash] of [[trained, `trained ${trained.toLocaleString("en-US")}`, "6 4"],
        [extended, `extended ${extended.toLocaleString("en-US")}`, "2 3"]]) {
        plot.append("line").attr("x1", m.left).attr("x2", width - m.right).attr("y1", y(length)).attr("y2", y(length))
          .attr("stroke", colours.muted).attr("stroke-dasharray", dash).attr("stroke-width", 1.5);
        plot.append("text").attr("x", m.left + 4).attr("y", y(length) - 4).attr("fill", colours.fg).attr("font-size", FONT).text(text);
      }
      const path = d3.line().defined(Number.isFinite).x((_, i) => x(i)).y((v) => y(v));
      plot.append("path").datum(before).attr("fill", "none").attr("stroke", colours.cycle[0]).attr("stroke-width", 2).attr("d", path);
      plot.append("path").datum(after).attr("fill", "none").attr("stroke", colours.cycle[1]).attr("stroke-width", 2)
        .attr("stroke-dasharray", "7 3").attr("d", path);
      const legend = plot.append("g").attr("transform", `translate(${width - m.right - 150},${m.top - 18})`);
      [["before (no scaling)", colours.cycle[0], null], [`after (${type})`, colours.cycle[1], "7 3"]].forEach(([text, colour, dash], k) => {
        legend.append("line").attr("x1", k * 0).attr("x2", 22).attr("y1", k * 16).attr("y2", k * 16)
          .attr("stroke", colour).attr("stroke-width", 2).attr("stroke-dasharray", dash);
        legend.append("text").attr("x", 28).attr("y", k * 16 + 4).attr("fill", colours.fg).attr("font-size", FONT).text(text);
      });
      plot.attr("aria-label", `Log-scale line plot of the wavelength of each of the ${dim / 2} rotation pairs, before and after ` +
        `${type} scaling with factor ${factor}, against the trained length ${trained} and the extended length ${extended}.`);
      let unchanged = 0;
      while (unchanged < dim / 2 && Math.abs(after[unchanged] / before[unchanged] - 1) < 1e-9) unchanged++;
      const pastTrained = before.filter((w) => w > trained).length;
      const settings = type === "yarn" ? `, beta_fast ${values.betaFast}, beta_slow ${values.betaSlow}`
        : type === "llama3" ? `, low_freq_factor ${values.low}, high_freq_factor ${values.high}`
          : lengthDependent ? `, current length ${values.seqLen.toLocaleString("en-US")}`
            : type === "proportional" ? `, partial_rotary_factor ${values.fraction}` : "";
      const slow = F.slowestTurning(before, after);
      // p-RoPE: compare the slowest pair that still turns with itself; the later pairs stop
      const change = slow.pair < 0 ? "no pair turns after scaling"
        : slow.stillFrom === null
          ? `the slowest wavelength goes from ${fmt(slow.before)} to ${fmt(slow.after)} positions`
          : `the slowest turning pair (${slow.pair}) goes from ${fmt(slow.before)} to ${fmt(slow.after)} ` +
            `positions, and pairs ${slow.stillFrom} to ${dim / 2 - 1} (wavelengths up to ` +
            `${fmt(before[dim / 2 - 1])}) no longer turn`;
      box.readout.textContent = `Head dim ${dim}, base ${base.toLocaleString("en-US")}, trained length ` +
        `${trained.toLocaleString("en-US")}, ${type} with factor ${factor}${settings}: ${unchanged} of ${dim / 2} pairs unchanged; ` +
        `${change} (${pastTrained} pairs were longer than the trained length). ` +
        `Attention scaling ${fmt(attention, 4)}.`;
    });
    return redraw;
  }
  // ---- RoPE rotation: a query and a key in one pair ---------------------------------------

  const Q = [0.95, 0.1];
  const K = [0.2, 0.9]; // the query and key of the RoPE animator page

  function rotate([a, b], angle) {
    return [a * Math.cos(angle) - b * Math.sin(angle), a * Math.sin(angle) + b * Math.cos(angle)];
  }

  function ropeRotation(host) {
    const box = frame(host, "RoPE rotation explorer");
    const MAX = 200;
    const controls = addControls(box, [
      { key: "dim", label: "Head dim", kind: "select", value: 8, parse: Number, options: [[8, "8"], [64, "64"], [128, "128"]] },
      { key: "pair", label: "Pair i", kind: "range", min: 0, max: 3, step: 1, value: 0, text: (v) => `pair ${v}` },
      { key: "m", label: "Query position m", kind: "range", min: 0, max: MAX, step: 1, value: 5, text: (v) => `query position ${v}` },
      { key: "n", label: "Key position n", kind: "range", min: 0, max: MAX, step: 1, value: 2, text: (v) => `key position ${v}` },
      // data-all-pairs="true" on the placeholder starts with four pairs shown (the RoPE animator page)
      { key: "all", label: "Four pairs at once", kind: "checkbox", value: host.dataset.allPairs === "true" },
    ], (key) => {
      if (key !== "play") stop();
      redraw();
    });
    const buttons = document.createElement("div");
    buttons.className = "posenc-explorer__buttons";
    box.controls.append(buttons);
    const holder = { controls: buttons };
    const back = button(holder, "\u2190 Step back", () => { stop(); shift(-1); });
    const play = button(holder, "Play", () => (timer ? stop() : start()));
    const step = button(holder, "Step \u2192", () => { stop(); shift(1); });
    back.setAttribute("aria-label", "Step back: move the query and the key one position back");
    step.setAttribute("aria-label", "Step: move the query and the key one position forward");
    play.setAttribute("aria-pressed", "false");
    let timer = null;
    function shift(delta) {
      const { m, n } = controls.values;
      if (Math.min(m, n) + delta < 0 || Math.max(m, n) + delta > MAX) return false;
      controls.setRange("m", { value: m + delta });
      controls.setRange("n", { value: n + delta });
      redraw();
      return true;
    }
    function start() {
      // at the last position there is nothing to play: start again from position 0, same offset
      const { m, n } = controls.values;
      if (Math.max(m, n) >= MAX) shift(-Math.min(m, n));
      timer = setInterval(() => { if (!shift(1)) stop(); }, 600);
      play.textContent = "Pause";
      play.setAttribute("aria-pressed", "true");
    }
    function stop() {
      if (timer) clearInterval(timer);
      timer = null;
      play.textContent = "Play";
      play.setAttribute("aria-pressed", "false");
    }
    const plot = svgPlot(box, 320);

    /** One pair's unit circle centred at (cx, cy): both vectors before (dashed) and after rotation. */
    function circle(colours, cx, cy, radius, angleQ, angleK, labels) {
      const q = rotate(Q, angleQ);
      const k = rotate(K, angleK);
      const s = d3.scaleLinear().domain([0, 1]).range([0, radius]);
      plot.append("circle").attr("cx", cx).attr("cy", cy).attr("r", radius).attr("fill", "none").attr("stroke", colours.grid);
      plot.append("line").attr("x1", cx - radius - 6).attr("x2", cx + radius + 6).attr("y1", cy).attr("y2", cy).attr("stroke", colours.grid);
      plot.append("line").attr("x1", cx).attr("x2", cx).attr("y1", cy - radius - 6).attr("y2", cy + radius + 6).attr("stroke", colours.grid);
      for (const [vector, start0, colour, label] of [[q, Q, colours.cycle[0], labels[0]], [k, K, colours.cycle[1], labels[1]]]) {
        const id = uid("posenc-explorer-arrow");
        plot.append("defs").append("marker").attr("id", id).attr("viewBox", "0 0 10 10").attr("refX", 9).attr("refY", 5)
          .attr("markerWidth", 7).attr("markerHeight", 7).attr("orient", "auto-start-reverse")
          .append("path").attr("d", "M0,0L10,5L0,10z").attr("fill", colour);
        plot.append("line").attr("x1", cx).attr("y1", cy).attr("x2", cx + s(start0[0])).attr("y2", cy - s(start0[1]))
          .attr("stroke", colour).attr("stroke-opacity", 0.6).attr("stroke-width", 2).attr("stroke-dasharray", "4 3");
        plot.append("line").attr("x1", cx).attr("y1", cy).attr("x2", cx + s(vector[0])).attr("y2", cy - s(vector[1]))
          .attr("stroke", colour).attr("stroke-width", 3).attr("marker-end", `url(#${id})`);
        if (label) {
          plot.append("text").attr("x", cx + s(vector[0]) * 1.12).attr("y", cy - s(vector[1]) * 1.12 + 4)
            .attr("text-anchor", vector[0] >= 0 ? "start" : "end").attr("fill", colours.fg).attr("font-size", FONT).text(label);
        }
      }
      return q[0] * k[0] + q[1] * k[1];
    }

    const redraw = timed(box, () => {
      controls.setRange("pair", { max: controls.values.dim / 2 - 1 });
      const { dim, pair, m, n, all } = controls.values;
      controls.show("pair", !all);
      const theta = F.ropeInverseFrequencies(dim, 10000, null, null);
      let total = 0; // the whole head: the same q and k pair in every pair of the head
      for (let i = 0; i < dim / 2; i++) {
        const qi = rotate(Q, m * theta[i]);
        const ki = rotate(K, n * theta[i]);
        total += qi[0] * ki[0] + qi[1] * ki[1];
      }
      const colours = palette();
      const width = plotWidth(box);
      plot.selectAll("*").remove();
      plot.attr("width", width);
      if (all) {
        // four pairs side by side (two rows on a narrow screen): all of them for dim 8, else spread out
        const shown = dim === 8 ? [0, 1, 2, 3] : [0, Math.round(dim / 12), Math.round(dim / 6), dim / 2 - 1];
        const columns = width >= 560 ? 4 : 2;
        const cell = width / columns;
        const radius = Math.min(cell / 2 - 14, 72);
        const rowHeight = 2 * radius + 58;
        const header = columns === 4 ? 30 : 46;
        plot.attr("height", header + rowHeight * Math.ceil(shown.length / columns));
        const legend = [`q at m = ${m} (blue), k at n = ${n} (orange)`, "dashed: before rotation"];
        (columns === 4 ? [legend.join("; ")] : legend).forEach((line, k) => {
          plot.append("text").attr("x", 8).attr("y", 16 + 16 * k).attr("fill", colours.fg).attr("font-size", FONT + 1).text(line);
        });
        const scores = shown.map((i, index) => {
          const cx = cell * (index % columns) + cell / 2;
          const top = header + rowHeight * Math.floor(index / columns);
          const score = circle(colours, cx, top + 22 + radius, radius, m * theta[i], n * theta[i], [null, null]);
          plot.append("text").attr("x", cx).attr("y", top + 12).attr("text-anchor", "middle").attr("fill", colours.fg)
            .attr("font-size", FONT).text(minus(`pair ${i}: q\u00b7k = ${score.toFixed(3)}`));
          return score;
        });
        plot.attr("aria-label", `Unit circles of pairs ${shown.join(", ")}: the query rotated to position ${m} and the key ` +
          `rotated to position ${n}; the dashed arrows are the vectors before rotation.`);
        box.readout.textContent = minus(`Head dim ${dim}. Query at ${m}, key at ${n}: distance m \u2212 n = ${m - n}. ` +
          `Scores of pairs ${shown.join(", ")}: ${scores.map((v) => v.toFixed(3)).join(", ")}; of the whole head: ${total.toFixed(3)}.`);
        return;
      }
      const H = 320;
      plot.attr("height", H);
      const radius = Math.min(H / 2 - 30, width / 2 - 80); // room for the labels beside the arrows
      const score = circle(colours, width / 2, H / 2 + 6, radius, m * theta[pair], n * theta[pair], [`q at m = ${m}`, `k at n = ${n}`]);
      plot.append("text").attr("x", 8).attr("y", 18).attr("fill", colours.fg).attr("font-size", FONT + 1)
        .text(minus(`pair ${pair}: \u03b8 = ${fmt(theta[pair], 3)} rad per position`));
      plot.append("text").attr("x", 8).attr("y", H - 10).attr("fill", colours.fg).attr("font-size", FONT + 1)
        .text(minus(`pair score q\u00b7k = ${score.toFixed(3)}`));
      plot.attr("aria-label", `Unit circle of pair ${pair}: the query rotated to position ${m} and the key rotated to position ${n}; ` +
        `the dashed arrows are the vectors before rotation.`);
      box.readout.textContent = minus(`Head dim ${dim}. Query at ${m}, key at ${n}: distance m \u2212 n = ${m - n}. ` +
        `Score of pair ${pair}: ${score.toFixed(3)}; of the whole ${dim}-dimensional head: ${total.toFixed(3)}.`);
    });
    return redraw;
  }

  W.register("rope-scaling", ropeScaling);
  W.register("rope-rotation", ropeRotation);
})();
