// The encoders of posenc/configs/_vision_towers.py, read from their configs: MiniMax-M3-VL, Gemma 4,
// EdgeTAM video, VideoLLaMA 3 and EfficientLoFTR. As in Python, each reader takes the family readers'
// helpers as an argument (`H`, passed by rope_vision.js, which is loaded after this file and binds
// these readers into its table); tests/test_explorer_vision_port.py compares every reading with posenc.
(function (global) {
  "use strict";

  function readMinimaxM3Vl(modelType, values, H) { // posenc/configs/_vision_towers.py read_minimax_m3_vl
    const { P, valueError, repr, size, floor, head, base, sameHeadDim, ladder, visionRope } = H;
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 1, "");
    sameHeadDim(modelType, values, headDim, "hidden_size / num_attention_heads");
    const w = 2 * floor(floor(headDim, 3), 2);
    if (w === 0) {
      throw valueError(`hidden_size=${P.str(values.hidden_size)} / num_attention_heads=${heads} = ${headDim} features per head ` +
        `must be at least 6 for model type ${repr(modelType)} (a pair per axis)`);
    }
    const b = base(modelType, values, ["axial", "default"]);
    const merge = size("spatial_merge_size", values.spatial_merge_size);
    const speeds = ladder(b, w / 2, 2 / w);
    const patch = size("patch_size", values.patch_size);
    const temporal = size("temporal_patch_size", values.temporal_patch_size);
    return visionRope(modelType, ["frame", "row", "column"], headDim, heads, [w / 2, w / 2, w / 2], 3 * w, b, [speeds, speeds, speeds],
      1.0, "half", "rotation", "index", [temporal, patch, patch], null, "merge_blocks", { token_order: "merge_blocks",
        spatial_merge_size: merge, notes: [
          "the grid is each input's (grid_thw); ids count frames, rows and columns from 0, rows and columns in blocks of " +
            `${merge} x ${merge} patches (vision_utils.py:112-123)`,
          `${headDim - 3 * w} of the ${headDim} features pass unrotated (minimax_m3_vl/modeling_minimax_m3_vl.py:1037-1047)`] });
  }

  function readGemma4Vision(modelType, values, H) { // posenc/configs/_vision_towers.py read_gemma4_vision
    const { valueError, repr, get, size, head, base, ladder, visionRope } = H;
    let heads = size("num_attention_heads", values.num_attention_heads);
    let headDim;
    if (get(values, "head_dim") === null) {
      [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4, "each axis rotates half the head, in pairs");
    } else {
      headDim = size("head_dim", values.head_dim);
      if (headDim % 4) {
        throw valueError(`head_dim=${headDim} must be a multiple of 4 for model type ${repr(modelType)} (each axis rotates ` +
          "half the head, in pairs; modeling_gemma4.py:876, 886-889)");
      }
    }
    const b = base(modelType, values, ["axial", "default"]);
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    const patch = size("patch_size", values.patch_size);
    return visionRope(modelType, ["column", "row"], headDim, heads, [headDim / 4, headDim / 4], headDim, b, [speeds, speeds], 1.0,
      "half_per_axis", "rotation", "index", [patch, patch], null, "any", { unrotated: "none (padding patches, at id -1, are masked)",
        notes: ["ids (x, y) count columns and rows from 0, row by row, from the image processor (image_processing_gemma4.py:252-256); " +
          "the model's table names its halves h and w, but the first holds x (modeling_gemma4.py:767-768)",
        "each axis's half of the head is rotated as its own half-layout RoPE: feature i with i + head_dim / 4 within the half " +
          "(apply_multidimensional_rope, modeling_gemma4.py:846-899)"] });
  }

  function readEdgetamVideo(modelType, values, H) { // posenc/configs/_vision_towers.py read_edgetam_video
    const { P, typeError, repr, size, readSam2Video } = H;
    const reading = readSam2Video(modelType, values);
    const sizes = values.memory_attention_rope_k_sizes;
    if (!P.isList(sizes) || sizes.length !== 2) throw typeError(`memory_attention_rope_k_sizes must be [width, height], got ${repr(sizes)}`);
    const cols = size("memory_attention_rope_k_sizes[0]", sizes[0]), rows = size("memory_attention_rope_k_sizes[1]", sizes[1]);
    const where = "edgetam_video/modeling_edgetam_video.py";
    const keys = { ...reading, grid: [rows, cols],
      unrotated: "in each memory frame's group, the tokens before its spatial ones; the object pointers at the end",
      notes: [`the cross-attention's keys: each memory frame's spatial tokens on this ${rows} x ${cols} grid ` +
        `(memory_attention_rope_k_sizes), ids (column, row) from 0, repeated for every frame (${where}:400-472)`] };
    return { ...reading, unrotated: "none among the queries; see keys", keys, notes: [
      `the queries (the current frame's features) sit on memory_attention_rope_feat_sizes, ids (column, row) from 0 ` +
        `(${where}:1263-1279); the self-attention turns its keys there too (${where}:310-336)`,
      "the cross-attention's keys sit on their own grid, memory_attention_rope_k_sizes: see keys"] };
  }

  function readVideoLlama3(modelType, values, H) { // posenc/configs/_vision_towers.py read_video_llama_3
    const { valueError, repr, size, head, base, sameHeadDim, ladder, visionRope, data } = H;
    const kind = values._input_kind;
    if (kind === null) {
      throw valueError(`input_kind is needed for model type ${repr(modelType)}: its ids are built with the merge size of each ` +
        "input, which the config does not hold (1 for images, 2 for videos, the processors' defaults); pass " +
        "input_kind='image' or input_kind='video'");
    }
    const [headDim, heads] = head(modelType, values, "hidden_size", "num_attention_heads", 4, "a quarter of the head per axis and feature half");
    sameHeadDim(modelType, values, headDim, "hidden_size / num_attention_heads", " (modeling_video_llama_3.py:81, 211)");
    const b = base(modelType, values, ["axial", "default"]);
    const patch = size("patch_size", values.patch_size);
    const { image, video } = data().by_input[modelType], merge = kind === "image" ? image : video;
    const shrunk = `each frame's features are shrunk ${video} x ${video} after the encoder (bilinear, video_llama_3/modeling_video_llama_3.py:429-450)`;
    const notes = kind === "image" ? [`the reading for images: the image processor's merge size is ${image} (image_processing_video_llama_3.py:98), so ids count rows and columns from 0, row by row (vision_utils.py:112-125)`,
      `for videos the merge size is ${video} (video_processing_video_llama_3.py:106): ids and tokens in ${video} x ${video} blocks, and ${shrunk}; read them with input_kind='video'`]
      : [`the reading for videos: the video processor's merge size is ${video} (video_processing_video_llama_3.py:106), so ids count rows and columns from 0 in blocks of ${video} x ${video} patches (vision_utils.py:112-125)`,
        `each frame repeats the same 2-D ids and attends only within itself (vision_utils.py:61-65, 125); ${shrunk}`,
        `for images the merge size is ${image}: ids row by row; read them with input_kind='image'`];
    const speeds = ladder(b, headDim / 4, 4 / headDim);
    return visionRope(modelType, ["row", "column"], headDim, heads, [headDim / 4, headDim / 4], headDim, b, [speeds, speeds], 1.0,
      "half", "rotation", "index", [patch, patch], null, merge > 1 ? "merge_blocks" : "any", {
        token_order: merge > 1 ? "merge_blocks" : "row_major", spatial_merge_size: merge, notes, input_kind: kind });
  }

  function readEfficientLoftr(modelType, values, H) { // posenc/configs/_vision_towers.py read_efficientloftr
    const { P, valueError, repr, get, has, size, floor, base, ladder, visionRope } = H;
    const hidden = size("hidden_size", values.hidden_size), heads = size("num_attention_heads", values.num_attention_heads);
    const b = base(modelType, values, ["default"]), params = P.truthy(get(values, "rope_parameters")) ? values.rope_parameters : {};
    const factor = P.checkFloat("partial_rotary_factor", has(params, "partial_rotary_factor") ? params.partial_rotary_factor
      : has(values, "partial_rotary_factor") ? values.partial_rotary_factor : 4.0, { positive: true, maximum: 1 << 20 });
    const width = P.truthy(get(values, "head_dim")) ? size("head_dim", values.head_dim) : floor(hidden, heads);
    const dim = Math.trunc(width * factor), rungs = floor(dim + 1, 2), where = "efficientloftr/modeling_efficientloftr.py";
    if (hidden % 4 || rungs !== hidden / 4) {
      throw valueError(`hidden_size=${hidden} must be a multiple of 4 and hold one rung per row and column pair for model type ${repr(modelType)}: ` +
        `(head_dim or hidden_size / num_attention_heads) = ${width} times partial_rotary_factor=${P.reprFloat(factor)} gives ${rungs} rungs, ` +
        "not hidden_size / 4 (modeling_efficientloftr.py:82-84, 117-121)");
    }
    const speeds = ladder(b, hidden / 4, 2 / dim);
    return visionRope(modelType, ["row", "column"], hidden, 1, [hidden / 4, hidden / 4], hidden, b, [speeds, speeds], 1.0, "interleaved",
      "rotation", "index_from_one", [1, 1], null, "any", { axis_pairs: "alternating",
        unrotated: "none in the self-attention; the cross-attention between the two images does not rotate", notes: [
          `the grid is the aggregated coarse feature map of each image ((cells - q_aggregation_kernel_size) // q_aggregation_stride + 1 per axis), rows and columns counted from 1, row by row (${where}:125-134, 757-760); the keys, aggregated with kv_aggregation_kernel_size and kv_aggregation_stride, must fall on the same grid`,
          `one rotation of all ${hidden} features before the split into ${heads} heads (${where}:383-396): each head holds its own run of the pairs, so the heads turn at different rungs`,
          `pairs alternate between the axes: pair 2m turns with the row, 2m + 1 with the column, both at rung m (${where}:82-84)`] });
  }

  global.posencVisionTowers = Object.freeze({ minimax_m3_vl_vision: readMinimaxM3Vl, gemma4_vision: readGemma4Vision,
    edgetam_video: readEdgetamVideo, video_llama_3_vision: readVideoLlama3, efficientloftr: readEfficientLoftr });
})(typeof window !== "undefined" ? window : globalThis);
