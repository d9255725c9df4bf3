// The widgets of additive biases, built from the scaffolding of widgets.js (loaded before it) around
// formulas.js:
//   alibi: the slope of every head and the causal bias of one head;
//   t5-buckets: the bucket of every offset, for T5's relative position bias.
(function () {
  "use strict";
  const F = window.posencExplorer;
  const d3 = window.d3;
  const W = window.posencExplorerWidgets;
  const { FONT, palette, fmt, minus, frame, addControls, svgPlot, plotWidth, styleAxis, axisLabel, heatmapURL,
    colourBar, timed } = W.helpers;

  // ---- ALiBi ----------------------------------------------------------------------------

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

  // ---- T5 buckets -----------------------------------------------------------------------

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

  W.register("alibi", alibi);
  W.register("t5-buckets", t5);
})();
