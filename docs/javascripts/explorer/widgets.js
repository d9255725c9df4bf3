// The explorer's widgets, shared part: the scaffolding every widget is built from (frame, labelled
// controls, D3 axes, heatmaps, colour bars, palettes, number formats) and the upgrade of placeholders.
// explorer.js loads this file (after formulas.js and D3) on pages that contain a placeholder
//   <div class="posenc-explorer" data-widget="NAME"> ... static figure (no-script fallback) ... </div>
// then the widget families, each registering its widgets here: widgets_sinusoidal.js (sinusoidal),
// widgets_rope.js (rope-scaling, rope-rotation), widgets_bias.js (alibi, t5-buckets); inspector.js
// later (rope-inspector). upgrade() takes the fallback out of the page and puts the widget in its
// place (the fallback comes back for printing). Every control has a label, works with the keyboard
// and announces its value; a live region announces what the drawing shows.
(function () {
  "use strict";
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
  /** A page-unique id: prefix-1, prefix-2, ... (one counter for every widget). */
  const uid = (prefix) => `${prefix}-${++counter}`;

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
      const id = uid("posenc-explorer");
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
    const id = uid("posenc-explorer-gradient");
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

  /** An integer in superscript digits (axis labels such as 10³). */
  function superscript(n) {
    const digits = "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
    return String(Math.round(n)).split("").map((c) => (c === "-" ? "\u207b" : digits[Number(c)])).join("");
  }

  // ---- upgrade placeholders ------------------------------------------------------------------

  const WIDGETS = {}; // name -> make(host), filled by register() (widgets_*.js, inspector.js)
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

  // The widget families (widgets_*.js) and inspector.js, loaded after this file, register here and
  // share the scaffolding.
  const register = (name, make) => { WIDGETS[name] = make; };
  const helpers = { FONT, palette, fmt, minus, uid, frame, addControls, button, svgPlot, plotWidth, styleAxis, axisLabel,
    heatmapURL, divergingRdBuR, colourBar, timed, superscript };
  window.posencExplorerWidgets = { upgrade, register, helpers, get widgets() { return Object.keys(WIDGETS); } };
})();
