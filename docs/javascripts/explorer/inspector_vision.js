// The config inspector's reading of a vision or video encoder (inspector.js draws the rest): the port
// of read_vision_config (rope_vision.js) turned into words. A config of an encoder (DINOv3, V-JEPA 2,
// Pixtral, a Qwen-VL tower, SAM 2/3 ...) gets this reading alone (read_config refuses it); a parent
// with a language model (Qwen2.5-VL, Llama 4, Mistral 3, GLM-4V ...) keeps its text reading and gets
// this one after it. Loaded before inspector.js.
(function () {
  "use strict";
  const P = window.posencPython;
  const V = window.posencRopeVision;
  const { fmt, minus } = window.posencExplorerWidgets.helpers;
  const MORE = "../positions-2d/#reading-a-vision-encoders-config";

  const isEncoder = (config) => (window.posencRopeData.vision_encoders || []).includes(P.get(config, "model_type"));

  /** {vision, visionError}: the reading, or posenc's refusal of it; both null where posenc reads none. A model
   * read per kind of input (VideoLLaMA 3: read_vision_config's input_kind) gets both readings, images first. */
  function readVision(config) {
    if (!V.readsVision(config)) return { vision: null, visionError: null };
    try {
      const readings = V.inputKinds(config).map((kind) => V.readVisionConfig(config, kind));
      return { vision: readings.length === 1 ? readings[0] : readings, visionError: null };
    } catch (error) {
      if (!(error instanceof P.PyError)) throw error;
      return { vision: null, visionError: error };
    }
  }

  const num = (v) => (Number.isInteger(+v) ? Number(v).toLocaleString("en-US") : fmt(+v, 6));
  const list = (values) => values.map(num).join(" \u00d7 ");

  const LAYOUTS = {
    half: "half: features i and i + d/2 form a pair",
    interleaved: "interleaved: features 2i and 2i + 1 form a pair",
    half_per_axis: "half within each axis's block of features: i and i + (block width)/2 form a pair",
  };
  const COORDINATES = {
    patch_centre: "the centre of each patch, scaled to [-1, 1] on each axis",
    index: "row and column indexes from 0",
    index_from_one: "row and column indexes from 1",
  };

  function gridWords(r) {
    if (r.grid_rule === "merge_blocks") {
      const m = r.spatial_merge_size;
      return `each input's own (rows and columns multiples of ${m}); tokens in ${m} \u00d7 ${m} blocks, each row by row`;
    }
    if (r.grid === null) return "each input's own";
    return r.grid_rule === "configured" ? `${list(r.grid)}, fixed by the config` :
      `each input's own (the configured image gives ${list(r.grid)})`;
  }

  // A video patch (a tubelet) spans frames too: "2 frames × 14 × 14 pixels", not "2 × 14 × 14 pixels";
  // a 1 × 1 patch is a memory attention's (SAM 2, SAM 3, EdgeTAM), whose grid is a feature map's cells
  function patchWords(size) {
    if (size.length === 2 && size.every((n) => +n === 1)) return "one feature-map cell (the grid counts cells of a feature map, not pixels)";
    if (size.length !== 3) return `${list(size)} pixels`;
    return `${num(size[0])} frame${+size[0] === 1 ? "" : "s"} \u00d7 ${list(size.slice(1))} pixels`;
  }

  const axisList = (axes) => (axes.length < 2 ? axes.join("") : `${axes.slice(0, -1).join(", ")} and ${axes[axes.length - 1]}`);

  function rows(r) {
    const out = [
      ["Axes", r.axes.map((axis, i) => `${axis}: ${r.sections[i]} pairs`).join(", ") +
        (r.axis_pairs === "alternating" ? " (alternating pair by pair in the head)" : " (in this order in the head)")],
      ["Rotated width", `${num(r.rotary_dim)} of ${num(r.head_dim)} features, ${num(r.num_heads)} head` +
        (+r.num_heads === 1 ? "" : "s")],
      ["Base", num(r.base) + (r.angle_scale !== 1 ? "; every angle multiplied by 2\u03c0" : "")],
      ["Layout", LAYOUTS[r.layout] + (r.pairing === "vjepa2" ? "; each third's table tiled, so a pair's two features turn by different rungs" : "")],
      ["Coordinates", COORDINATES[r.coordinates] + (r.coordinate_scale !== 1 ? `, \u00d7 ${fmt(r.coordinate_scale, 4)}` : "")],
      ["Patch", patchWords(r.patch_size)],
      ["Grid", gridWords(r)],
      ["Unrotated tokens", r.unrotated],
    ];
    if (r.augmentation) {
      const parts = Object.entries(r.augmentation).map(([k, v]) => `${k} ${v === null ? "off" : num(v)}`);
      out.push(["Augmentation", `${parts.join(", ")} (training only)`]);
    }
    return out;
  }

  // posenc's notes send a Python reader to the other kind of input (read_vision_config's input_kind); here that
  // reading is on show, images first: the note points to it instead
  const PLACE = { image: "above", video: "below" };
  const shownNote = (note) => note.replace(/; read them with input_kind='(image|video)'$/,
    (_, kind) => `; the reading for ${kind}s is ${PLACE[kind]}`);

  /** One reading (and SAM 3's windowed layers as a second) as sections of the results. */
  function sections(el, parent, r, label = "Vision encoder") {
    const section = el("section", "posenc-inspector__layer posenc-inspector__vision");
    parent.append(section);
    const n = r.layers.length; // SAM 3: the global layers listed, the windowed ones (all the others) counted
    const layers = n ? ` (${n} layer${n === 1 ? "" : "s"}${n <= 8 ? `: ${r.layers.join(", ")}` : ""})` : "";
    const kind = r.input_kind ? `, for ${r.input_kind}s` : ""; // VideoLLaMA 3: one reading per kind of input
    section.append(el("h3", null, `${label}: ${r.model_type}${layers}${kind}`));
    const dl = el("dl", "posenc-inspector__settings");
    for (const [term, value] of rows(r)) dl.append(el("dt", null, term), el("dd", null, minus(value)));
    section.append(dl);
    const notes = el("ul", "posenc-inspector__findings");
    for (const note of r.notes) notes.append(el("li", "posenc-inspector__fact", shownNote(note)));
    const more = el("li", "posenc-inspector__fact");
    const a = el("a", null, "Read more");
    a.href = MORE;
    a.setAttribute("aria-label", "Read more: reading a vision encoder's config");
    more.append(document.createTextNode("How these settings place patches: "), a);
    notes.append(more);
    section.append(notes);
    if (r.windowed) sections(el, parent, r.windowed, "Windowed layers");
    if (r.keys) sections(el, parent, r.keys, "Its cross-attention's keys");
  }

  /** The vision part of the results: the reading, or why posenc does not read the encoder. */
  function render(el, parent, result) {
    if (result.textError) {
      const hint = /layout is needed/.test(result.textError.message) ? " Choose the layout in the menu above." : "";
      parent.append(el("p", "posenc-inspector__caption", `Its language model is not read: ${result.textError.message}.${hint}`));
    }
    const label = result.rope || result.textError ? "Its vision encoder" : "Vision encoder";
    if (result.vision) for (const r of [].concat(result.vision)) sections(el, parent, r, label);
    else if (result.visionError) {
      parent.append(el("p", "posenc-inspector__caption", `Its vision encoder is not read: ${result.visionError.message}.`));
    }
  }

  /** The readout's sentence for a vision reading (for two readings, one per kind of input, the first and the kinds). */
  function readout(vision) {
    const r = [].concat(vision)[0];
    const kinds = Array.isArray(vision) ? ` (read for ${vision.map((v) => `${v.input_kind}s`).join(" and ")})` : "";
    return `vision encoder ${r.model_type}${kinds}: ${r.axes.length}-D RoPE over ${axisList(r.axes)}, ${num(r.rotary_dim)} of ` +
      `${num(r.head_dim)} features rotate, base ${num(r.base)}, ` +
      (r.layout === "half_per_axis" ? "half pairs within each axis's block" : `${r.layout} pairs`);
  }

  window.posencInspectorVision = Object.freeze({ isEncoder, readVision, render, readout, shownNote });
})();
