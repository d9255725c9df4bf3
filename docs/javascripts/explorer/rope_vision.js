// How a vision or video encoder rotates its patch tokens, read from its config: a port of
// posenc/configs/vision.py (read_vision_config) and its family readers (posenc/configs/_vision_models.py;
// those of posenc/configs/_vision_towers.py are in rope_vision_towers.js, loaded before this file).
// The tables (class defaults, parents, fixed sub-configs, families) come from posenc itself
// (`vision_data()`, shipped by hooks/rope_data.py in assets/posenc/rope-data.js as JSON text):
// nothing is retyped here. A reading has VisionRope's fields (dataclasses.asdict of it: tuples as
// arrays, `windowed` a nested reading or null); bad configs throw the same kind of error (class, and
// the key it names) as posenc: tests/test_explorer_vision_port.py compares them.
(function (global) {
  "use strict";
  const P = global.posencPython;
  const { valueError, typeError, repr, get, has } = P;
  const TWO_PI = 2 * Math.PI;
  let tables = null;

  function data() {
    if (!tables) {
      const shipped = global.posencRopeData && global.posencRopeData.vision;
      if (!shipped) throw new Error("posenc explorer: the vision tables (assets/posenc/rope-data.js) are not loaded");
      tables = global.posencJSON.parseJSON(shipped);
    }
    return tables;
  }

  // ---- posenc/configs/_vision_models.py's helpers -----------------------------------------------
  const size = (name, value) => P.checkInt(name, value, { minimum: 1, maximum: 1 << 20 });
  const floor = (a, b) => Math.floor(a / b);

  /** image_size / patch_size: an int, or (height, width). */
  function pair(name, value) {
    if (P.isInt(value)) return [size(name, value), size(name, value)];
    if (P.isList(value) && value.length === 2) return [size(`${name}[0]`, value[0]), size(`${name}[1]`, value[1])];
    throw typeError(`${name} must be an integer or [height, width], got ${repr(value)}`);
  }

  function head(modelType, values, widthKey, headsKey, multiple, why) {
    const width = size(widthKey, get(values, widthKey)), heads = size(headsKey, get(values, headsKey));
    if (width % heads) {
      throw valueError(`${widthKey}=${width} must be a multiple of ${headsKey}=${heads} for model type ${repr(modelType)} ` +
        `(each head gets ${widthKey} / ${headsKey} features)`);
    }
    const headDim = width / heads;
    if (headDim % multiple) {
      throw valueError(`${widthKey}=${width} / ${headsKey}=${heads} = ${headDim} features per head must be a multiple of ` +
        `${multiple} for model type ${repr(modelType)} (${why})`);
    }
    return [headDim, heads];
  }

  /** rope_theta from rope_parameters (where transformers 5 keeps it), else the top-level key. */
  function base(modelType, values, allowed) {
    let params = get(values, "rope_parameters");
    if (params !== null && !P.isMapping(params)) throw typeError(`rope_parameters must be a dict, got ${repr(params)}`);
    params = P.truthy(params) ? params : {};
    const ropeType = has(params, "rope_type") ? params.rope_type : allowed[0];
    if (!allowed.includes(ropeType)) {
      throw valueError(`rope_parameters['rope_type'] must be ${allowed.map(repr).join(" or ")} for model type ` +
        `${repr(modelType)} (its rotary module refuses others), got ${repr(ropeType)}`);
    }
    const theta = has(params, "rope_theta") ? params.rope_theta : get(values, "rope_theta");
    return P.checkFloat("rope_theta", theta, { positive: true });
  }

  /** A head_dim key must be the width the attention splits heads into (`split`: how, in words). */
  function sameHeadDim(modelType, values, headDim, split, where = "") {
    const stated = get(values, "head_dim");
    if (stated === null || P.equal(stated, headDim)) return;
    throw valueError(`head_dim=${repr(stated)} must equal ${split} = ${headDim} for model type ${repr(modelType)}: its ` +
      `attention splits heads that way${where}`);
  }

  /** base ** -(offset + step * k) for k < count. */
  const ladder = (b, count, step, offset = 0) => Array.from({ length: count }, (_, k) => b ** -(offset + step * k));

  function sub(values, key) {
    const found = P.truthy(get(values, key)) ? get(values, key) : {};
    if (!P.isMapping(found)) throw typeError(`${key} must be a dict (a sub-config), got ${repr(found)}`);
    return found;
  }

  /** VisionRope(...): its fields in its order, with its defaults. */
  function visionRope(modelType, axes, headDim, heads, sections, rotaryDim, b, speeds, angleScale, layout, pairing,
    coordinates, patch, grid, gridRule, more = {}) {
    return { model_type: modelType, axes, head_dim: headDim, num_heads: heads, sections, rotary_dim: rotaryDim, base: b,
      speeds, angle_scale: angleScale, layout, pairing, coordinates, patch_size: patch, grid, grid_rule: gridRule,
      token_order: "row_major", spatial_merge_size: null, unrotated: "none", augmentation: null, coordinate_scale: 1.0,
      layers: [], windowed: null, notes: [], axis_pairs: "blocks", keys: null, input_kind: null, ...more };
  }

  // ---- the family readers, in _vision_models.py's order of checks --------------------------------
  function readSam3Vit(modelType, values) {
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4, "a quarter of the head per axis, in pairs");
    const image = pair("image_size", values.image_size), patch = pair("patch_size", values.patch_size);
    if (image[0] !== image[1] || patch[0] !== patch[1]) {
      throw valueError(`image_size and patch_size must be square for model type ${repr(modelType)} (its global layers' ids ` +
        `assume a square grid), got image_size=${repr(values.image_size)}, patch_size=${repr(values.patch_size)}`);
    }
    const b = base(modelType, values, ["axial", "default"]);
    const side = floor(image[0], patch[0]), window = size("window_size", values.window_size);
    if (side === 0) {
      throw valueError(`image_size=${image[0]} must be at least patch_size=${patch[0]} for model type ${repr(modelType)} ` +
        "(the grid has image_size // patch_size patches per side)");
    }
    const depth = size("num_hidden_layers", values.num_hidden_layers);
    const indexes = values.global_attn_indexes;
    if (!P.isList(indexes)) throw typeError(`global_attn_indexes must be a list of layer indexes, got ${repr(indexes)}`);
    const globalLayers = indexes.map((i, j) => P.checkInt(`global_attn_indexes[${j}]`, i)).filter((i) => i >= 0 && i < depth);
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    const common = (coordinates, grid, more) => visionRope(modelType, ["column", "row"], headDim, heads, [headDim / 4, headDim / 4],
      headDim, b, [speeds, speeds], 1.0, "interleaved", "rotation", coordinates, patch, grid, "configured", more);
    const windowed = common("index", [window, window], { coordinate_scale: 1.0,
      layers: Array.from({ length: depth }, (_, i) => i).filter((i) => !globalLayers.includes(i)),
      notes: [`each ${window} x ${window} window (zero-padded at the edges) counts from 0 (modeling_sam3.py:664-692, 755-773)`] });
    return common("index", [side, side], { coordinate_scale: window / side, layers: globalLayers, windowed,
      notes: [`the global layers place the ${side} x ${side} patches at ids times ${window}/${side}, so the grid spans the ` +
        "range of one window (modeling_sam3.py:773)",
      "rotate_pairwise (modeling_sam3.py:465-482): pairs (2i, 2i + 1), columns first"] });
  }

  function readDinov3(modelType, values) {
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4, "a quarter of the head per axis and feature half");
    const b = modelType !== "eomt_dinov3" ? P.checkFloat("rope_theta", values.rope_theta, { positive: true })
      : base(modelType, values, ["default"]);
    const image = pair("image_size", values.image_size), patch = pair("patch_size", values.patch_size);
    const q = headDim / 4;
    const speeds = ladder(b, q, 4 / headDim);
    const augmentation = {};
    for (const key of ["shift", "jitter", "rescale"]) {
      const value = get(values, `pos_embed_${key}`);
      augmentation[key] = value === null ? null : P.checkFloat(`pos_embed_${key}`, value, { minimum: key === "shift" ? 0.0 : 1.0 });
    }
    const prefix = 1 + P.checkInt("num_register_tokens", values.num_register_tokens, { minimum: 0, maximum: 1 << 20 });
    const unrotated = `the first ${prefix} tokens (class token and ${prefix - 1} register tokens` +
      (modelType === "eomt_dinov3" ? ", and in its last blocks EoMT's query tokens" : "") + ")";
    const [gridAt, drawnAt] = data().dino_lines[modelType] || ["modeling_dinov3_vit.py:175-182", "modeling_dinov3_vit.py:190-196"];
    return visionRope(modelType, ["row", "column"], headDim, heads, [q, q], headDim, b, [speeds, speeds], TWO_PI, "half",
      "rotation", "patch_centre", patch, [floor(image[0], patch[0]), floor(image[1], patch[1])], "any", { unrotated, augmentation,
        notes: [`the grid is the input's: rows = image height // patch height, columns likewise (${gridAt}); ` +
          "the configured grid is image_size // patch_size",
        "training only: pos_embed_shift, pos_embed_jitter, pos_embed_rescale are drawn once per forward " +
          `(${drawnAt}); evaluation uses the plain coordinates`] });
  }

  function readVjepa2(modelType, values) {
    const crop = pair("crop_size", values.crop_size), patch = pair("patch_size", values.patch_size);
    if (crop[0] !== crop[1] || !P.isInt(values.crop_size)) {
      throw valueError("crop_size must be one integer (V-JEPA 2's grid is crop_size // patch_size on both axes, " +
        `modeling_vjepa2.py:235), got ${repr(values.crop_size)}`);
    }
    if (patch[0] !== patch[1]) {
      throw valueError("patch_size must be square for model type 'vjepa2' (its ids assume a square grid, " +
        `modeling_vjepa2.py:235-277), got ${repr(values.patch_size)}`);
    }
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 1, "");
    const [predDim] = head(modelType, values, "pred_hidden_size", "pred_num_attention_heads", 1, "");
    const w = 2 * floor(floor(headDim, 3), 2);
    if (w === 0) {
      throw valueError(`hidden_size=${P.str(values.hidden_size)} / num_attention_heads=${heads} = ${headDim} features per head ` +
        "must be at least 6 for model type 'vjepa2' (a pair per axis)");
    }
    const speeds = ladder(10000.0, w / 2, 2 / w);
    const frames = floor(size("frames_per_clip", values.frames_per_clip), size("tubelet_size", values.tubelet_size));
    const side = floor(crop[0], patch[0]);
    const predW = 2 * floor(floor(predDim, 3), 2);
    return visionRope(modelType, ["frame", "row", "column"], headDim, heads, [w / 2, w / 2, w / 2], 3 * w, 10000.0,
      [speeds, speeds, speeds], 1.0, "interleaved", "vjepa2", "index", [values.tubelet_size, ...patch], [frames, side, side],
      "configured", { notes: [
        `V-JEPA 2 derives a token's (frame, row, column) from its index and the configured ${side} x ${side} grid ` +
          "(modeling_vjepa2.py:245-277): another grid's rows wrap",
        `${headDim - 3 * w} of the ${headDim} features pass unrotated (modeling_vjepa2.py:289-293)`,
        "the pairing is the released models': each third's table is tiled (repeat), so the features of a pair turn by " +
          "different rungs (modeling_vjepa2.py:195-196)",
        `the predictor rotates the same way with its own heads of ${predDim} features (thirds of ${predW}), at the ids of ` +
          "the tokens it is given (modeling_vjepa2.py:258-266)"] });
  }

  function readPixtral(modelType, values) {
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4, "a quarter of the head per axis and feature half");
    const b = base(modelType, values, ["axial", "default"]);
    const q = headDim / 4;
    const rows = ladder(b, q, 4 / headDim), cols = ladder(b, q, 4 / headDim, 2 / headDim);
    const image = pair("image_size", values.image_size), patch = pair("patch_size", values.patch_size);
    return visionRope(modelType, ["row", "column"], headDim, heads, [q, q], headDim, b, [rows, cols], 1.0, "half", "rotation",
      "index", patch, [floor(image[0], patch[0]), floor(image[1], patch[1])], "any", { notes: [
        "each image's patches count rows and columns from 0 on its own grid (modeling_pixtral.py:428-436); image_size bounds the grid"] });
  }

  function readLlama4(modelType, values) {
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4,
      "a quarter of the head per axis: pairs of complex numbers, columns then rows");
    const image = pair("image_size", values.image_size), patch = pair("patch_size", values.patch_size);
    if (!P.isInt(values.image_size) || !P.isInt(values.patch_size)) {
      throw valueError(`image_size and patch_size must be integers for model type ${repr(modelType)} (its grid is square, ` +
        `image_size // patch_size per side, modeling_llama4.py:989), got image_size=${repr(values.image_size)}, ` +
        `patch_size=${repr(values.patch_size)}`);
    }
    const b = base(modelType, values, ["default"]);
    const side = floor(image[0], patch[0]);
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    return visionRope(modelType, ["column", "row"], headDim, heads, [headDim / 4, headDim / 4], headDim, b, [speeds, speeds], 1.0,
      "interleaved", "rotation", "index_from_one", patch, [side, side], "configured", {
        unrotated: "the class token, placed last (angle 0)",
        notes: [`the table is built once for the configured ${side} x ${side} grid (modeling_llama4.py:989-1005)`] });
  }

  function readQwen(modelType, values) {
    const given = values._given;
    const widthKey = modelType === "qwen2_vl_vision" ? "embed_dim" : "hidden_size";
    const { defaults, ids_row_major: rowMajorIds, overrides } = data();
    const aliased = has(defaults[modelType], "num_heads"); // a class without the alias has only num_attention_heads
    const headsKey = given.includes("num_attention_heads") || !aliased ? "num_attention_heads" : "num_heads";
    const [headDim, heads] = head(modelType, values, widthKey, headsKey, 4, "a quarter of the head per axis and feature half");
    sameHeadDim(modelType, values, headDim, `${widthKey} / ${headsKey}`);
    const b = base(modelType, values, ["axial", "default"]);
    const rowMajor = has(rowMajorIds, modelType) ? rowMajorIds[modelType] : null; // ids built with a merge size of 1
    const merge = rowMajor ? null : size("spatial_merge_size", values.spatial_merge_size);
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    const patch = size("patch_size", values.patch_size);
    const sizes = has(defaults[modelType], "temporal_patch_size")
      ? [size("temporal_patch_size", values.temporal_patch_size), patch, patch] : [patch, patch];
    const { notes: more = [], images_only: imagesOnly = false, ...changes } = has(overrides, modelType) ? overrides[modelType] : {};
    const video = imagesOnly ? [] : [data().towers.includes(modelType) ? "a video's frames repeat the same 2-D ids (vision_utils.py:125)"
      : "a video's frames repeat the same 2-D ids: time is placed by the language model's M-RoPE"];
    const start = changes.coordinates === "index_from_one" ? 1 : 0;
    const ids = merge ? `the grid is each image's (grid_thw); ids count rows and columns from ${start}, in blocks of ${merge} x ` +
      `${merge} patches (vision_utils.py:112-125)` : `the grid is each image's; ids count rows and columns from ${start}, row by row (${rowMajor})`;
    const reading = visionRope(modelType, ["row", "column"], headDim, heads, [headDim / 4, headDim / 4], headDim, b, [speeds, speeds], 1.0,
      "half", "rotation", "index", sizes, null, merge ? "merge_blocks" : "any", { token_order: merge ? "merge_blocks" : "row_major",
        spatial_merge_size: merge, notes: [ids, ...more, ...video] });
    return Object.assign(reading, changes);
  }

  function readSam2Video(modelType, values) {
    const hidden = size("memory_attention_hidden_size", values.memory_attention_hidden_size);
    const heads = size("memory_attention_num_attention_heads", values.memory_attention_num_attention_heads);
    const rate = size("memory_attention_downsample_rate", values.memory_attention_downsample_rate);
    const headDim = floor(hidden, rate * heads);
    if (hidden % (rate * heads) || headDim % 4 || headDim === 0) {
      throw valueError(`memory_attention_hidden_size=${hidden} / (memory_attention_downsample_rate=${rate} * ` +
        `memory_attention_num_attention_heads=${heads}) must be a positive multiple of 4 for model type ${repr(modelType)} ` +
        "(a quarter of the head per axis, in pairs)");
    }
    const b = base(modelType, values, ["axial", "default"]);
    let sizes = values.memory_attention_rope_feat_sizes;
    if (modelType === "sam3_tracker_video") { // image_size // the backbone's patch overwrites the feature sizes
      const backbone = sub(sub(values, "vision_config"), "backbone_config");
      const side = floor(size("image_size", has(values, "image_size") ? values.image_size : 1008),
        size("patch_size", has(backbone, "patch_size") ? backbone.patch_size : 14));
      sizes = [side, side];
    }
    if (!P.isList(sizes) || sizes.length !== 2) throw typeError(`memory_attention_rope_feat_sizes must be [width, height], got ${repr(sizes)}`);
    const cols = size("memory_attention_rope_feat_sizes[0]", sizes[0]), rows = size("memory_attention_rope_feat_sizes[1]", sizes[1]);
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    return visionRope(modelType, ["column", "row"], headDim, heads, [headDim / 4, headDim / 4], headDim, b, [speeds, speeds], 1.0,
      "interleaved", "rotation", "index", [1, 1], [rows, cols], "configured", {
        unrotated: "the object-pointer tokens at the end of the memory keys (num_k_exclude_rope)",
        notes: ["the memory attention's positions are fixed by memory_attention_rope_feat_sizes (modeling_sam2_video.py:1012-1019); " +
          "memories of several frames repeat them on the keys"] });
  }

  // The helpers the readers of rope_vision_towers.js take (as posenc/configs/_vision_models.py's _Helpers).
  const H = Object.freeze({ P, valueError, typeError, repr, get, has, size, floor, head, base, sameHeadDim, ladder, visionRope,
    readSam2Video, data });
  const towers = Object.entries(global.posencVisionTowers)
    .map(([family, reader]) => [family, (modelType, values) => reader(modelType, values, H)]);
  const READERS = { dinov3_vit: readDinov3, vjepa2: readVjepa2, pixtral: readPixtral, llama4_vision_model: readLlama4,
    qwen: readQwen, sam2_video: readSam2Video, sam3_vit_model: readSam3Vit, ...Object.fromEntries(towers) };

  // ---- read_vision_config -----------------------------------------------------------------------
  /** Whether `config` names a model type posenc reads as a vision or video encoder (or a parent of one). */
  function readsVision(config) {
    const type = P.isMapping(config) ? get(config, "model_type") : null;
    return typeof type === "string" && data().model_types.includes(type);
  }

  /** read_vision_config(config, input_kind): a VisionRope's fields, or a PyError as posenc raises it. */
  function readVisionConfig(config, inputKind = null) {
    if (!P.isMapping(config)) {
      throw typeError(`config must be a dict (a config.json) or a transformers config, got ${P.typeName(config)}`);
    }
    if (inputKind !== null) P.checkChoice("input_kind", inputKind, data().input_kinds);
    const { defaults, families, parents, fixed_children: fixed, model_types: known } = data();
    let cfg = config;
    let modelType = get(cfg, "model_type");
    if (typeof modelType === "string" && has(parents, modelType)) {
      const [path, child] = parents[modelType];
      const given = data().sub_defaults[modelType] || {}; // a missing sub-config: the parent's defaults for it, else its type's
      for (const key of path) {
        const found = P.truthy(get(cfg, key)) ? get(cfg, key) : P.deepCopy(given[key] || {});
        if (!P.isMapping(found)) throw typeError(`${key} must be a dict (a sub-config of ${repr(modelType)}), got ${repr(found)}`);
        cfg = found;
      }
      // a fixed sub-config class reads the dict whatever its model_type says; an AutoConfig one follows it
      const own = get(cfg, "model_type");
      modelType = fixed.includes(child) ? child : P.truthy(own) ? own : child;
    }
    if (typeof modelType !== "string" || !has(defaults, modelType)) {
      const why = typeof modelType === "string" && has(data().refused, modelType) ? data().refused[modelType] : "";
      throw valueError(`config['model_type'] is ${repr(modelType)}: posenc does not read a vision encoder's rotary ` +
        `positions for it${why}; it reads ${known.join(", ")}`);
    }
    const values = P.deepCopy(defaults[modelType]);
    for (const key of P.keys(cfg)) {
      if (cfg[key] !== null || key.startsWith("pos_embed")) P.setKey(values, key, cfg[key]);
    }
    values._given = P.keys(cfg).filter((key) => cfg[key] !== null);
    values._input_kind = inputKind;
    for (const [alias, key] of Object.entries(data().aliases[modelType] || {})) { // attribute_map: the alias wins
      if (get(cfg, alias) !== null) values[key] = cfg[alias];
    }
    return READERS[families[modelType]](modelType, values);
  }

  /** The input kinds to read `config` with: both where its reading needs one (VideoLLaMA 3), else [null]. */
  function inputKinds(config) {
    const { parents, by_input: byInput, input_kinds: kinds } = data();
    const type = P.isMapping(config) ? get(config, "model_type") : null;
    const child = typeof type === "string" && has(parents, type) ? parents[type][1] : type;
    return typeof child === "string" && has(byInput, child) ? kinds : [null];
  }

  global.posencRopeVision = Object.freeze({ readVisionConfig, readsVision, inputKinds });
})(typeof window !== "undefined" ? window : globalThis);
