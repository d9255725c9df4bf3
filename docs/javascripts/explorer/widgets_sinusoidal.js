// The sinusoidal encoding widget (data-widget="sinusoidal"): the table as a heatmap for a chosen
// number of positions, width and base, and the cosine similarity of one position with every other.
// Built from the scaffolding of widgets.js (loaded before it) around formulas.js.
(function () {
  "use strict";
  const F = window.posencExplorer;
  const d3 = window.d3;
  const W = window.posencExplorerWidgets;
  const { palette, fmt, minus, frame, addControls, svgPlot, plotWidth, styleAxis, axisLabel, heatmapURL,
    divergingRdBuR, colourBar, timed } = W.helpers;

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

  W.register("sinusoidal", sinusoidal);
})();
