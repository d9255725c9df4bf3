// The explorer's widgets: controls and drawings (D3) around the pure formulas of formulas.js.
// explorer.js loads this file (after formulas.js and D3) on pages that contain a placeholder
//   <div class="posenc-explorer" data-widget="NAME"> ... static figure (no-script fallback) ... </div>
// and calls upgrade(): the fallback is taken out of the page and the widget put in its place
// (the fallback comes back for printing). Every control has a label, works with the keyboard
// and announces its value; a live region announces what the drawing shows.
(function () {
  "use strict";
  const F = window.posencExplorer;
  const d3 = window.d3;
  const FONT = 12;

  // Colours: the same light and dark palettes as posenc/figures/_style.py (Okabe-Ito cycle).
  const PALETTES = {
    light: { fg: "#1f2328", muted: "#57606a", grid: "#d0d7de",
      cycle: ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"] },
    dark: { fg: "#e6edf3", muted: "#9aa5b1", grid: "#3a404c",
      cycle: ["#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#F0E442", "#FF8C5A"] },
  };
  function palette() {
    return document.body.getAttribute("data-md-color-scheme") === "slate" ? PALETTES.dark : PALETTES.light;
  }

  const fmt = (value, digits = 3) => {
    if (value === 0) return "0";
    const magnitude = Math.abs(value);
    if (magnitude >= 1e5 && magnitude < 1e12) return Number(value.toPrecision(digits)).toLocaleString("en-US");
    if (magnitude >= 1e12 || magnitude < 1e-3) return value.toExponential(digits - 1).replace("e+", "e");
    return Number(value.toPrecision(digits)).toLocaleString("en-US", { maximumFractionDigits: 6 });
  };
  const minus = (text) => String(text).replace(/(^|[\s(=:,])-(?=[\d.])/g, "$1\u2212"); // typographic minus signs

  let counter = 0;

  // ---- shared scaffolding ------------------------------------------------------------------

  /** A widget: a heading-less box with controls, drawings and a live readout. */
  function frame(host, title) {
    const root = document.createElement("div");
    root.className = "posenc-explorer__widget";
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", title);
    const controls = document.createElement("div");
    controls.className = "posenc-explorer__controls";
    const plots = document.createElement("div");
    plots.className = "posenc-explorer__plots";
    const readout = document.createElement("p");
    readout.className = "posenc-explorer__readout";
    readout.setAttribute("role", "status");
    readout.setAttribute("aria-live", "polite");
    root.append(controls, readout, plots);
    host.append(root);
    return { root, controls, plots, readout };
  }

  /**
   * Build labelled controls. spec: {key, label, kind: "range"|"select"|"checkbox"|"button",
   * min, max, step, value, options: [[value, text]], text: (value) => announced text}.
   */
  function addControls(box, specs, onChange) {
    const api = { values: {}, inputs: {}, rows: {} };
    for (const spec of specs) {
      const id = `posenc-explorer-${++counter}`;
      const row = document.createElement("div");
      row.className = `posenc-explorer__control posenc-explorer__control--${spec.kind}`;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = spec.label;
      let input;
      if (spec.kind === "select") {
        input = document.createElement("select");
        for (const [value, text] of spec.options) {
          const option = document.createElement("option");
          option.value = String(value);
          option.textContent = text;
          input.append(option);
        }
        input.value = String(spec.value);
      } else {
        input = document.createElement("input");
        input.type = spec.kind;
        if (spec.kind === "range") {
          for (const key of ["min", "max", "step"]) input[key] = String(spec[key]);
          input.value = String(spec.value);
        } else {
          input.checked = Boolean(spec.value);
        }
      }
      input.id = id;
      const output = document.createElement("output");
      output.htmlFor = id;
      output.setAttribute("aria-hidden", "true"); // the control itself announces its value
      if (spec.kind === "checkbox") row.append(input, label);
      else row.append(label, input);
      if (spec.kind === "range") row.append(output);
      const read = () => {
        const raw = spec.kind === "checkbox" ? input.checked : input.value;
        const value = spec.kind === "range" ? Number(raw) : spec.kind === "checkbox" ? raw : spec.parse ? spec.parse(raw) : raw;
        api.values[spec.key] = value;
        if (spec.kind === "range") {
          const text = spec.text ? spec.text(value) : String(value);
          input.setAttribute("aria-valuetext", text);
          output.textContent = spec.show ? spec.show(value) : String(value);
        }
        return value;
      };
      read();
      input.addEventListener(spec.kind === "range" ? "input" : "change", () => {
        read();
        onChange(spec.key);
      });
      api.inputs[spec.key] = input;
      api.rows[spec.key] = row;
      input.addEventListener("posenc-read", read);
      box.controls.append(row);
    }
    /** Change a range's bounds (clamping its value) and re-read it. */
    api.setRange = (key, { min, max, value }) => {
      const input = api.inputs[key];
      if (min !== undefined) input.min = String(min);
      if (max !== undefined) input.max = String(max);
      if (value !== undefined) input.value = String(value);
      const clamped = Math.min(Math.max(Number(input.value), Number(input.min)), Number(input.max));
      input.value = String(clamped);
      input.dispatchEvent(new Event("posenc-read"));
    };
    api.show = (key, visible) => { api.rows[key].hidden = !visible; };
    return api;
  }

  function button(box, text, onClick) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "md-button posenc-explorer__button";
    element.textContent = text;
    element.addEventListener("click", onClick);
    box.controls.append(element);
    return element;
  }

  /** An SVG drawing, full width of the widget, with an accessible name. */
  function svgPlot(box, height) {
    const svg = d3.select(box.plots).append("svg")
      .attr("class", "posenc-explorer__plot")
      .attr("role", "img")
      .attr("height", height);
    return svg;
  }

  function plotWidth(box) {
    return Math.max(260, Math.floor(box.plots.clientWidth || 600));
  }

  function styleAxis(selection, colours) {
    selection.attr("font-size", FONT).attr("font-family", "inherit");
    selection.selectAll("path, line").attr("stroke", colours.muted);
    selection.selectAll("text").attr("fill", colours.fg);
    return selection;
  }

  function axisLabel(svg, colours, text, x, y, rotate = false) {
    svg.append("text").attr("x", x).attr("y", y).attr("fill", colours.fg).attr("font-size", FONT)
      .attr("text-anchor", "middle").attr("transform", rotate ? `rotate(-90 ${x} ${y})` : null).text(text);
  }

  /** A table of values drawn as an image (one pixel per cell), returned as a data URL. */
  function heatmapURL(rows, cols, valueAt, interpolate, low, high) {
    const lut = [];
    for (let k = 0; k < 256; k++) lut.push(d3.rgb(interpolate(k / 255)));
    const canvas = document.createElement("canvas");
    canvas.width = cols;
    canvas.height = rows;
    const context = canvas.getContext("2d");
    const image = context.createImageData(cols, rows);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const value = valueAt(r, c);
        const offset = 4 * (r * cols + c);
        if (value === null) continue; // transparent
        const k = Math.round(Math.min(Math.max((value - low) / (high - low), 0), 1) * 255);
        image.data[offset] = lut[k].r;
        image.data[offset + 1] = lut[k].g;
        image.data[offset + 2] = lut[k].b;
        image.data[offset + 3] = 255;
      }
    }
    context.putImageData(image, 0, 0);
    return canvas.toDataURL();
  }

  const divergingRdBuR = (t) => d3.interpolateRdBu(1 - t); // matplotlib's RdBu_r: blue low, red high

  function colourBar(svg, x, y, height, interpolate, low, high, colours, label) {
    const id = `posenc-explorer-gradient-${++counter}`;
    const gradient = svg.append("defs").append("linearGradient").attr("id", id)
      .attr("x1", 0).attr("y1", 1).attr("x2", 0).attr("y2", 0);
    for (let k = 0; k <= 10; k++) gradient.append("stop").attr("offset", k / 10).attr("stop-color", interpolate(k / 10));
    svg.append("rect").attr("x", x).attr("y", y).attr("width", 10).attr("height", height).attr("fill", `url(#${id})`);
    const scale = d3.scaleLinear().domain([low, high]).range([y + height, y]);
    styleAxis(svg.append("g").attr("transform", `translate(${x + 10},0)`)
      .call(d3.axisRight(scale).ticks(4).tickFormat((v) => minus(fmt(v, 2)))), colours);
    axisLabel(svg, colours, label, x + 60, y + height / 2, true);
  }

  /** Run an update, timing it; the time is kept on the widget for the checks (data-update-ms). */
  function timed(box, update) {
    return () => {
      const started = performance.now();
      update();
      box.root.dataset.updateMs = (performance.now() - started).toFixed(2);
    };
  }

  // ---- 1. sinusoidal encoding -------------------------------------------------------------

  function sinusoidal(host) {
    const box = frame(host, "Sinusoidal encoding explorer");
    const controls = addControls(box, [
      { key: "positions", label: "Positions", kind: "range", min: 8, max: 256, step: 8, value: 64, text: (v) => `${v} positions` },
      { key: "dim", label: "d_model", kind: "range", min: 4, max: 512, step: 4, value: 128, text: (v) => `d_model ${v}` },
      { key: "base", label: "Base", kind: "select", value: 10000, parse: Number,
        options: [[100, "100"], [1000, "1,000"], [10000, "10,000 (the paper)"], [100000, "100,000"], [1000000, "1,000,000"]] },
      { key: "p", label: "Position p", kind: "range", min: 0, max: 63, step: 1, value: 20, text: (v) => `position ${v}` },
    ], () => redraw());
    const heat = svgPlot(box, 300);
    const line = svgPlot(box, 230);
    const redraw = timed(box, () => {
      controls.setRange("p", { max: controls.values.positions - 1 });
      const { positions, dim, base, p } = controls.values;
      const colours = palette();
      const pe = F.sinusoidalEncoding(positions, dim, base);
      const width = plotWidth(box);
      // heatmap: positions down, dimensions across, the row of position p outlined
      heat.attr("width", width).selectAll("*").remove();
      const m = { left: 48, right: 74, top: 8, bottom: 40 };
      const x = d3.scaleLinear().domain([0, dim]).range([m.left, width - m.right]);
      const y = d3.scaleLinear().domain([0, positions]).range([m.top, 300 - m.bottom]);
      heat.append("image").attr("x", m.left).attr("y", m.top).attr("width", x(dim) - m.left).attr("height", y(positions) - m.top)
        .attr("preserveAspectRatio", "none").attr("style", "image-rendering: pixelated")
        .attr("href", heatmapURL(positions, dim, (r, c) => pe[r][c], divergingRdBuR, -1, 1));
      heat.append("rect").attr("x", m.left).attr("y", y(p)).attr("width", x(dim) - m.left).attr("height", Math.max(y(p + 1) - y(p), 2))
        .attr("fill", "none").attr("stroke", colours.fg).attr("stroke-width", 1.5);
      styleAxis(heat.append("g").attr("transform", `translate(0,${300 - m.bottom})`).call(d3.axisBottom(x).ticks(Math.min(6, width / 90))), colours);
      styleAxis(heat.append("g").attr("transform", `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(5)), colours);
      axisLabel(heat, colours, "dimension", (m.left + width - m.right) / 2, 300 - 6);
      axisLabel(heat, colours, "position", 12, (m.top + 300 - m.bottom) / 2, true);
      colourBar(heat, width - m.right + 8, m.top, 300 - m.top - m.bottom, divergingRdBuR, -1, 1, colours, "value");
      heat.attr("aria-label", `Heatmap of the sinusoidal encoding, ${positions} positions by ${dim} dimensions, base ${base}; the row of position ${p} is outlined.`);
      // cosine similarity of position p with every position: PE[p] . PE[q] / (dim / 2)
      const similarity = pe.map((row) => d3.sum(row, (v, i) => v * pe[p][i]) / (dim / 2));
      line.attr("width", width).selectAll("*").remove();
      const n = { left: 48, right: 74, top: 10, bottom: 40 };
      const sx = d3.scaleLinear().domain([0, positions - 1]).range([n.left, width - n.right]);
      const sy = d3.scaleLinear().domain([Math.min(0, d3.min(similarity)), 1]).nice().range([230 - n.bottom, n.top]);
      styleAxis(line.append("g").attr("transform", `translate(0,${230 - n.bottom})`).call(d3.axisBottom(sx).ticks(Math.min(6, width / 90))), colours);
      styleAxis(line.append("g").attr("transform", `translate(${n.left},0)`).call(d3.axisLeft(sy).ticks(5).tickFormat((v) => minus(fmt(v, 2)))), colours);
      line.append("path").datum(similarity).attr("fill", "none").attr("stroke", colours.cycle[0]).attr("stroke-width", 2)
        .attr("d", d3.line().x((_, q) => sx(q)).y((v) => sy(v)));
      line.append("circle").attr("cx", sx(p)).attr("cy", sy(1)).attr("r", 4).attr("fill", colours.cycle[1]);
      axisLabel(line, colours, "position q", (n.left + width - n.right) / 2, 230 - 6);
      axisLabel(line, colours, `cosine(PE[${p}], PE[q])`, 12, (n.top + 230 - n.bottom) / 2, true);
      line.attr("aria-label", `Line plot of the cosine similarity between position ${p} and every position from 0 to ${positions - 1}.`);
      let best = -1;
      for (let q = 0; q < positions; q++) if (q !== p && (best < 0 || similarity[q] > similarity[best])) best = q;
      const worst = d3.minIndex(similarity);
      box.readout.textContent = minus(`${positions} positions, d_model ${dim}, base ${base.toLocaleString("en-US")}. ` +
        `Position ${p} is most similar to position ${best} (cosine ${fmt(similarity[best], 3)}) and least similar ` +
        `to position ${worst} (cosine ${fmt(similarity[worst], 3)}).`);
    });
    return redraw;
  }

  // ---- 2. RoPE frequencies under scaling ----------------------------------------------------

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
      const still = after.length - finite.length;
      const slowest = finite.length ? fmt(finite[finite.length - 1]) : "none";
      box.readout.textContent = `Head dim ${dim}, base ${base.toLocaleString("en-US")}, trained length ` +
        `${trained.toLocaleString("en-US")}, ${type} with factor ${factor}${settings}: ${unchanged} of ${dim / 2} pairs unchanged; ` +
        `the slowest wavelength goes from ${fmt(before[dim / 2 - 1])} to ${slowest} positions ` +
        `(${pastTrained} pairs were longer than the trained length)` +
        (still ? `; ${still} pairs do not turn at all` : "") + `. Attention scaling ${fmt(attention, 4)}.`;
    });
    return redraw;
  }

  function superscript(n) {
    const digits = "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
    return String(Math.round(n)).split("").map((c) => (c === "-" ? "\u207b" : digits[Number(c)])).join("");
  }

  // ---- 3. RoPE rotation: a query and a key in one pair ---------------------------------------

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
        const id = `posenc-explorer-arrow-${++counter}`;
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

  // ---- 4. ALiBi ----------------------------------------------------------------------------

  function alibi(host) {
    const box = frame(host, "ALiBi explorer");
    const controls = addControls(box, [
      { key: "heads", label: "Number of heads", kind: "range", min: 1, max: 64, step: 1, value: 12, text: (v) => `${v} heads` },
      { key: "head", label: "Head shown", kind: "range", min: 0, max: 11, step: 1, value: 0, text: (v) => `head ${v}` },
      { key: "seq", label: "Sequence length", kind: "range", min: 4, max: 32, step: 1, value: 12, text: (v) => `${v} tokens` },
    ], () => redraw());
    const slopePlot = svgPlot(box, 250);
    const biasPlot = svgPlot(box, 300);
    const redraw = timed(box, () => {
      controls.setRange("head", { max: controls.values.heads - 1 });
      const { heads, head, seq } = controls.values;
      const slopes = F.alibiSlopes(heads);
      let closest = 1;
      while (closest * 2 <= heads) closest *= 2;
      const colours = palette();
      const width = plotWidth(box);
      slopePlot.attr("width", width).selectAll("*").remove();
      const m = { left: 62, right: 16, top: 30, bottom: 40 };
      const x = d3.scaleLinear().domain([-0.5, Math.max(heads - 0.5, 1.5)]).range([m.left, width - m.right]);
      const y = d3.scaleLog().base(2).domain([Math.pow(2, -8.5), 1]).range([250 - m.bottom, m.top]);
      const powers = [0, -2, -4, -6, -8];
      slopePlot.append("g").selectAll("line").data(powers).join("line").attr("x1", m.left).attr("x2", width - m.right)
        .attr("y1", (e) => y(Math.pow(2, e))).attr("y2", (e) => y(Math.pow(2, e))).attr("stroke", colours.grid);
      styleAxis(slopePlot.append("g").attr("transform", `translate(0,${250 - m.bottom})`)
        .call(d3.axisBottom(x).ticks(Math.min(heads, 8, width / 60)).tickFormat(d3.format("d"))), colours);
      styleAxis(slopePlot.append("g").attr("transform", `translate(${m.left},0)`)
        .call(d3.axisLeft(y).tickValues(powers.map((e) => Math.pow(2, e))).tickFormat((v) => (v === 1 ? "1" : `1/${Math.round(1 / v)}`))), colours);
      axisLabel(slopePlot, colours, "head", (m.left + width - m.right) / 2, 250 - 6);
      axisLabel(slopePlot, colours, "slope m (log scale)", 14, (m.top + 250 - m.bottom) / 2, true);
      slopePlot.append("g").selectAll("circle").data(slopes.slice(0, closest)).join("circle")
        .attr("cx", (_, h) => x(h)).attr("cy", y).attr("r", 4.5).attr("fill", colours.cycle[0]);
      slopePlot.append("g").selectAll("rect").data(slopes.slice(closest)).join("rect")
        .attr("x", (_, h) => x(closest + h) - 4.5).attr("y", (v) => y(v) - 4.5).attr("width", 9).attr("height", 9).attr("fill", colours.cycle[1]);
      slopePlot.append("circle").attr("cx", x(head)).attr("cy", y(slopes[head])).attr("r", 8).attr("fill", "none").attr("stroke", colours.fg).attr("stroke-width", 1.5);
      const legend = slopePlot.append("g").attr("transform", `translate(${m.left + 6},12)`);
      legend.append("circle").attr("cx", 5).attr("cy", 0).attr("r", 4.5).attr("fill", colours.cycle[0]);
      legend.append("text").attr("x", 14).attr("y", 4).attr("fill", colours.fg).attr("font-size", FONT).text(`${closest}-head sequence`);
      if (closest < heads) {
        legend.append("rect").attr("x", 150).attr("y", -4.5).attr("width", 9).attr("height", 9).attr("fill", colours.cycle[1]);
        legend.append("text").attr("x", 164).attr("y", 4).attr("fill", colours.fg).attr("font-size", FONT).text(`every other of ${2 * closest}`);
      }
      slopePlot.attr("aria-label", `Slopes of the ${heads} heads on a log scale: circles for the ${closest}-head sequence` +
        (closest < heads ? `, squares for the ${heads - closest} extra head${heads - closest === 1 ? "" : "s"} taken from the ${2 * closest}-head sequence.` : "."));
      // the causal bias of one head: -m (i - j) for keys j <= i, future keys blank
      biasPlot.attr("width", width).selectAll("*").remove();
      const side = Math.min(300 - 50, width - 150);
      const b = { left: 48, top: 8 };
      const low = -slopes[head] * (seq - 1);
      const cell = d3.scaleLinear().domain([0, seq]).range([0, side]);
      biasPlot.append("image").attr("x", b.left).attr("y", b.top).attr("width", side).attr("height", side)
        .attr("preserveAspectRatio", "none").attr("style", "image-rendering: pixelated")
        .attr("href", heatmapURL(seq, seq, (i, j) => (j > i ? null : -slopes[head] * (i - j)), d3.interpolateViridis, low, 0));
      const ticks = d3.range(0, seq, seq > 16 ? 8 : 4);
      styleAxis(biasPlot.append("g").attr("transform", `translate(${b.left},${b.top + side})`)
        .call(d3.axisBottom(cell).tickValues(ticks.map((t) => t + 0.5)).tickFormat((t) => String(t - 0.5))), colours);
      styleAxis(biasPlot.append("g").attr("transform", `translate(${b.left},${b.top})`)
        .call(d3.axisLeft(cell).tickValues(ticks.map((t) => t + 0.5)).tickFormat((t) => String(t - 0.5))), colours);
      axisLabel(biasPlot, colours, "key j", b.left + side / 2, b.top + side + 36);
      axisLabel(biasPlot, colours, "query i", 12, b.top + side / 2, true);
      colourBar(biasPlot, b.left + side + 14, b.top, side, d3.interpolateViridis, low, 0, colours, "bias \u2212m\u00b7(i \u2212 j)");
      biasPlot.attr("height", side + 50);
      biasPlot.attr("aria-label", `Causal ALiBi bias of head ${head} for ${seq} tokens: 0 on the diagonal, falling by ${fmt(slopes[head], 3)} per position of distance; future keys are blank.`);
      const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
      const extra = closest < heads ? ` and ${heads - closest} from every other slope of the ${2 * closest}-head sequence` : "";
      box.readout.textContent = minus(`${count(heads, "head")}: ${count(closest, "slope")} from the ${closest}-head sequence${extra}. ` +
        `Head ${head} has slope ${fmt(slopes[head], 4)}: over ${seq} tokens its bias reaches ${fmt(low, 3)} at distance ${seq - 1}.`);
    });
    return redraw;
  }

  // ---- 5. T5 buckets -----------------------------------------------------------------------

  function t5(host) {
    const box = frame(host, "T5 relative position buckets explorer");
    const controls = addControls(box, [
      { key: "buckets", label: "Number of buckets", kind: "range", min: 4, max: 64, step: 2, value: 32, text: (v) => `${v} buckets` },
      { key: "maxDistance", label: "Max distance", kind: "range", min: 2, max: 512, step: 1, value: 128, text: (v) => `max distance ${v}` },
      { key: "bidirectional", label: "Bidirectional (encoder)", kind: "checkbox", value: true },
    ], () => redraw());
    const plot = svgPlot(box, 320);
    const H = 320;
    const redraw = timed(box, () => {
      const { buckets, bidirectional } = controls.values;
      const exact = Math.floor((bidirectional ? buckets / 2 : buckets) / 2);
      controls.setRange("maxDistance", { min: exact + 1 });
      const maxDistance = controls.values.maxDistance;
      const reach = Math.ceil(maxDistance * 1.25);
      const offsets = d3.range(-reach, reach + 1);
      const values = offsets.map((o) => F.t5RelativePositionBucket(o, bidirectional, buckets, maxDistance));
      const colours = palette();
      const width = plotWidth(box);
      plot.attr("width", width).selectAll("*").remove();
      const m = { left: 52, right: 16, top: 14, bottom: 42 };
      const x = d3.scaleLinear().domain([-reach, reach]).range([m.left, width - m.right]);
      const y = d3.scaleLinear().domain([0, buckets - 1]).range([H - m.bottom, m.top]);
      plot.append("rect").attr("x", x(-exact + 0.5)).attr("width", x(exact - 0.5) - x(-exact + 0.5)).attr("y", m.top)
        .attr("height", H - m.bottom - m.top).attr("fill", colours.grid).attr("fill-opacity", 0.6);
      for (const edge of [-maxDistance, maxDistance]) {
        plot.append("line").attr("x1", x(edge)).attr("x2", x(edge)).attr("y1", m.top).attr("y2", H - m.bottom)
          .attr("stroke", colours.muted).attr("stroke-dasharray", "2 3").attr("stroke-width", 1.5);
      }
      styleAxis(plot.append("g").attr("transform", `translate(0,${H - m.bottom})`)
        .call(d3.axisBottom(x).ticks(Math.min(8, width / 70)).tickFormat((v) => minus(v))), colours);
      styleAxis(plot.append("g").attr("transform", `translate(${m.left},0)`).call(d3.axisLeft(y).ticks(Math.min(8, buckets))), colours);
      plot.append("path").datum(values).attr("fill", "none").attr("stroke", colours.cycle[0]).attr("stroke-width", 2)
        .attr("d", d3.line().curve(d3.curveStepAfter).x((_, i) => x(offsets[i])).y((v) => y(v)));
      axisLabel(plot, colours, "offset (key position \u2212 query position)", (m.left + width - m.right) / 2, H - 6);
      axisLabel(plot, colours, "bucket", 14, (m.top + H - m.bottom) / 2, true);
      plot.attr("aria-label", `Step plot of the T5 bucket of every offset from ${-reach} to ${reach}, ${buckets} buckets, ` +
        `max distance ${maxDistance}, ${bidirectional ? "bidirectional" : "causal"}; the shaded band is the exact region.`);
      let lastStart = exact;
      const last = F.t5RelativePositionBucket(-maxDistance * 4, bidirectional, buckets, maxDistance);
      while (F.t5RelativePositionBucket(-lastStart, bidirectional, buckets, maxDistance) !== last) lastStart++;
      box.readout.textContent = minus(`${bidirectional ? "Bidirectional" : "Causal"}, ${buckets} buckets, max distance ${maxDistance}: ` +
        `distances 0 to ${exact - 1} have a bucket each; the last bucket of the past (${last}) starts at distance ${lastStart}.`);
    });
    return redraw;
  }

  // ---- upgrade placeholders ------------------------------------------------------------------

  const WIDGETS = {
    sinusoidal,
    "rope-scaling": ropeScaling,
    "rope-rotation": ropeRotation,
    alibi,
    "t5-buckets": t5,
  };
  const live = [];

  function upgrade(placeholders) {
    for (const host of placeholders) {
      const make = WIDGETS[host.dataset.widget];
      if (!make || host.dataset.upgraded) continue;
      const fallback = [...host.childNodes];
      host.replaceChildren();
      host.dataset.upgraded = "true";
      // links to the static figure (#figure-NAME) now lead to the widget
      const figure = fallback.find((node) => node.nodeName === "FIGURE" && node.id);
      if (figure && !host.id) host.id = figure.id;
      const redraw = make(host);
      live.push({ host, fallback, redraw, widget: host.lastElementChild });
      redraw();
    }
  }

  // Redraw on a palette switch and when the column width changes.
  new MutationObserver(() => live.forEach((w) => w.redraw()))
    .observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  let lastWidth = 0;
  new ResizeObserver(() => {
    const width = document.body.clientWidth;
    if (width !== lastWidth) {
      lastWidth = width;
      live.forEach((w) => w.redraw());
    }
  }).observe(document.body);
  // Printing shows the static figures, as without scripts.
  // The fallback's images sit in <noscript> (hooks/site_weight.py: not downloaded with scripts on).
  function unwrapNoscript(node) {
    if (!node.querySelectorAll) return;
    for (const holder of node.querySelectorAll("noscript")) {
      const template = document.createElement("template");
      template.innerHTML = holder.textContent;
      holder.replaceWith(template.content);
    }
  }
  window.addEventListener("beforeprint", () => {
    for (const w of live) {
      w.fallback.forEach(unwrapNoscript);
      w.fallback.forEach((node) => { if (node.querySelectorAll) node.querySelectorAll("img").forEach((img) => { img.loading = "eager"; }); });
      w.id = w.host.id;
      w.host.removeAttribute("id"); // the figure has it back while it is shown
      w.host.append(...w.fallback);
    }
  });
  window.addEventListener("afterprint", () => {
    for (const w of live) {
      w.fallback.forEach((node) => node.remove());
      if (w.id) w.host.id = w.id;
    }
  });

  // More widgets (inspector.js, loaded after this file) register here and share the scaffolding.
  const register = (name, make) => { WIDGETS[name] = make; };
  const helpers = { FONT, palette, fmt, minus, frame, svgPlot, plotWidth, styleAxis, axisLabel, timed, superscript };
  window.posencExplorerWidgets = { upgrade, register, helpers, get widgets() { return Object.keys(WIDGETS); } };
})();
