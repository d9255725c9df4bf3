// The config inspector's words that depend on what a layer is (inspector.js draws them): what each
// warning means and where the chapters explain it, the facts listed under "Findings", the window of a
// kind of layer (causal, two-sided, centred, or over uncompressed keys only), the rotated width against the
// query-key head's width, and a warning's text with its config keys set as code. Loaded before inspector.js.
(function () {
  "use strict";
  const { num } = window.posencInspectorChart; // inspector_chart.js
  const link = (page, anchor) => `../${page}/#${anchor}`;

  const MEANINGS = [
    [/^static YaRN/, "Short inputs are rotated with the stretched frequencies too, so their slow pairs no longer turn as they did before the extension.",
      link("context-extension", "yarn")],
    [/the base .* is too small/, "Past one turn of the slowest pair, positions far apart get the same angles: rotation alone cannot tell them apart.",
      link("rope-today", "the-base-is-a-design-choice")],
    [/^--length/, "The config declares fewer positions: past them the model runs outside the context it was trained or extended for.",
      link("context-extension", "why-rope-models-do-not-simply-work-past-their-training-length")],
    [/depend on the sequence length/, "Keys cached at one length were rotated with other frequencies than the queries that read them later.",
      link("inference", "dynamic-ntk")],
    [/^the config has no/, "The layout is the config class's default; weights converted for the other pairing give wrong results without an error.",
      link("pitfalls", "rope-layout-mismatch")],
    [/^M-RoPE/, "Text positions are the same on all three axes, so text rotates as ordinary RoPE.",
      link("positions-2d", "m-rope-text-and-images-in-one-position-space")],
    [/^more than one rotary site|also rotates q and k in/, "Each layer rotates at several places (each with its own width, layout " +
      "or positions), all by the angles shown here; the Site rows of each kind of layer list them.", link("architectures", "rotary-sites")],
    [/limits the uncompressed keys/, "The window bounds only the keys kept as they are; the compressed layers also read compressed " +
      "entries of the whole past, so their reach is not the window.", link("architectures", "rotary-sites")],
    [/^config\['is_causal'\] is false/, "This config turns the model's causal masks into two-way ones: every " +
      "layer reads the tokens after the query too, as an encoder does, a window as far after as before; flash " +
      "attention may still run causally.", link("architectures", "modernbert")],
    [/also sees the tokens after the query.*halves/, "This config makes the model read its input both ways, as an encoder: " +
      "every layer's window reaches after the query too, and the windows shown here are already halved.", link("architectures", "modernbert")],
    [/also sees the tokens after the query/, "This config makes the model read its input both ways, as an encoder: " +
      "every layer's window reaches after the query too, as far as the numbers shown here.", link("architectures", "modernbert")],
    [/would limit every attention layer/, "The model-wide window is at least as long as the declared context, so " +
      "within that context it masks no key: every layer sees the whole past.", link("inference", "windows-and-sinks")],
    [/limits every attention layer: transformers' code/, "transformers names these layers full_attention but masks " +
      "every one with the model-wide window; the Window row above is that window.", link("inference", "windows-and-sinks")],
    [/limits every attention layer on both sides/, "This model reads its input both ways, as an encoder, and every " +
      "layer only within the window on each side of the query; the Window row above is that window.", link("architectures", "modernbert")],
    [/is off while config\['layer_types'\] names sliding_attention/, "Whether these layers are windowed depends on " +
      "how transformers runs the attention: its eager and sdpa attention apply the window through the mask, as read " +
      "here; its flash attention does not.", link("inference", "windows-and-sinks")],
    [/^reference_sliding_attention layers \(R-SWA\)/, "These layers keep the whole prompt in view and slide only over " +
      "the tokens generated after it, so a query sees keys at every distance: they are read with no window.",
      link("inference", "windows-and-sinks")],
    [/depends on `position_embeddings is not None`/, "The model's forward decides which layers rotate, by passing " +
      "no rotation to the others; the reading shows which layers get one, as the config names them.",
      link("rope-today", "layer-patterns-nope-local-and-global")],
    [/^rope type 'dynamic' with 'alpha'/, "HunYuan's checkpoints name this scaling dynamic, but with alpha set " +
      "the base is stretched once, for every length: the frequencies shown are the model's from the first token " +
      "(NTK-aware scaling, not its dynamic form).", link("context-extension", "ntk-aware-scaling")],
    [/keeps building the causal mask/, "Whether a token sees the ones after it depends on how transformers runs the " +
      "attention here, not on the config alone; the reading follows the mask.", link("architectures", "modernbert")],
    // the register of transformers' departures (posenc.configs._divergences): posenc reads transformers' side
    [/^config\['rotary_dim'\].*transformers departs from the published model/, "The reading above is the model as " +
      "transformers builds it, rotating the whole head; MiniMax-01 as released rotates only rotary_dim features, so " +
      "when transformers runs its weights, the features trained without rotation turn too.", link("architectures", "hybrids")],
    [/^config\['dual_chunk_attention_config'\].*transformers departs from the published model/, "The reading above " +
      "is the model as transformers builds it: plain RoPE at every length. Qwen2.5-1M's authors run it with Dual " +
      "Chunk Attention, the same up to the length the note gives; past it, their chunks keep every query-key distance " +
      "within that length, so a longer input meets, in transformers, distances the authors' attention never gives " +
      "the model (its card warns of lost accuracy there).", link("extension-designs-measured", "training-free")],
    [/transformers departs from the published model/, "The reading above is the model as transformers builds it; " +
      "the model's authors run it otherwise, so weights trained their way meet other windows or rotations when " +
      "transformers runs them.", link("explore", "config-inspector")],
    // posenc.configs._reader._part_notes: the part of an encoder-decoder config read
    [/^read: config\['(decoder|generator|decoder_config)'\]/, "This config holds more than one model; the reading " +
      "above is its language model's, the part that writes the text. An encoder is read when its own config is " +
      "pasted alone (T5Gemma 2's encoder window reaches both ways).", link("architectures", "modernbert")],
    // posenc.configs._two_way.part_notes: a module config of an encoder-decoder given without its part flag
    [/^config\['is_decoder'\] is not given/, "This config serves both halves of an encoder-decoder model; without " +
      "is_decoder it is read as its class's default, the encoder, whose layers read the tokens after the query too. " +
      "Set is_decoder to true to read the decoder.", link("architectures", "modernbert")],
    [/./, "transformers' code for this model type does something posenc does not read from the config; check the model's attention code.",
      link("rope-today", "reading-a-models-config")],
  ];
  const FACTS = {
    nope: ["These layers get no positions from RoPE: order reaches them only through the other layers, and through the " +
      "causal mask where the model's attention is causal.",
      link("rope-today", "layer-patterns-nope-local-and-global")],
    recurrent: ["These layers are recurrent (linear attention, Gated DeltaNet, Mamba: transformers files Mamba layers " +
      "under linear_attention): a state updated token by token carries order by itself, so they take no rotation, and " +
      "some also weight older tokens down by their distance (MiniMax-01's lightning layers). RoPE acts only in the " +
      "attention layers.", link("architectures", "hybrids")],
    conv: ["These layers mix each token with the few before it by a short causal convolution: its weights tell the " +
      "offsets apart, so they see order within their kernel and take no rotation.", link("why-position", "why-rnns-and-cnns-do-not")],
    pointwise: ["These layers (a feed-forward block or a mixture of experts) act on each token alone: they mix no " +
      "tokens, so positions play no part in them.", link("glossary", "permutation-equivariance")],
    unknown: ["posenc does not know what this kind of layer does with positions.", link("rope-today", "layer-patterns-nope-local-and-global")],
    window: ["These layers attend only to the most recent tokens, so their context is the window, not the whole input.",
      link("inference", "windows-and-sinks")],
    window_idle: ["The window reaches across the whole context shown, so within it these layers attend as if they " +
      "had none; it would cut only longer inputs.", link("inference", "windows-and-sinks")],
    window_both: ["These layers attend only to the tokens within the window on each side of the query, not to the whole input.",
      link("architectures", "modernbert")],
    window_centred: ["These layers attend only to a window centred on the query: W tokens reach (W - 1) // 2 before " +
      "it and W // 2 after, one more after than before when W is even; the rest of the input is out of their reach.", link("architectures", "modernbert")],
    window_chunked: ["These layers attend only within fixed chunks: a query sees the keys of its own chunk up to " +
      "itself, so its reach falls back to 1 at every chunk's start.", link("architectures", "llama-4")],
    window_compressed: ["The window limits only these layers' uncompressed keys; their compressed keys summarise the whole past.",
      link("architectures", "rotary-sites")],
    partial: ["Only part of each head rotates; the other features carry no position.", link("rope-today", "partial-rotary-only-some-features-turn")],
    proportional: ["The slowest pairs do not turn at all: their frequency is zero, so those features carry no position.", link("rope-today", "p-rope-the-slowest-pairs-do-not-turn-at-all")],
    attention: ["cos and sin are multiplied by this factor, so the attention logits by its square.", link("rope-today", "yarns-attention-factor-in-full")],
    softmax: ["DeepSeek's attention also multiplies the softmax scale 1/sqrt(d) by this factor.", link("rope-today", "yarns-attention-factor-in-full")],
    temperature: ["The queries are scaled (after the rotation, where the layer rotates) by a factor that grows with the position.", link("glossary", "query-temperature")],
    sinks: ["Each head has a learned sink logit that can take attention away from every token.", link("inference", "windows-and-sinks")],
  };

  const own = (data, key) => Object.prototype.hasOwnProperty.call(data || {}, key);
  /** The layers that are not attention (posenc.configs._table.NOT_ATTENTION_LAYER_TYPES) by what carries order in
   * them: the key of their fact, and the words of their Rotates row (they have no window or temperature either). */
  const NOT_ATTENTION = {
    linear_attention: "recurrent", mamba: "recurrent", conv: "conv", mlp: "pointwise", moe: "pointwise" };
  const NOT_ROTATED = {
    recurrent: "no: a recurrent layer, whose state carries order; only attention layers rotate",
    conv: "no: a short causal convolution, which sees order within its kernel; only attention layers rotate",
    pointwise: "no: it acts on each token alone; only attention layers rotate",
  };
  const notAttention = (name) => (own(NOT_ATTENTION, name) ? NOT_ATTENTION[name] : null);

  /** Whether the model's attention reaches both ways (an encoder of posenc.configs._windows.TWO_SIDED or CENTRED). */
  const twoSided = (rope) => own(window.posencRopeData.two_sided, rope.model_type) ||
    own(window.posencRopeData.centred, rope.model_type) ||
    Object.values(rope.layers).some((layer) => ["both", "centred"].includes(layer.window_sides));
  /** A centred window's reach (posenc.configs._windows.reach): the tokens before the query and after it. */
  const centredWords = (w) => {
    const before = Math.floor((Number(w) - 1) / 2), after = Math.floor(Number(w) / 2);
    return `${num(before)} token${before === 1 ? "" : "s"} before the query and ${num(after)} after`;
  };
  /** Whether a kind of layer also attends to compressed keys (a DeepSeek-V4 "compressor" site). */
  const compressed = (sites) => sites.some((s) => s.name === "compressor");

  function windowWords(name, layer, rope, sites) {
    if (layer.window === null) return twoSided(rope) ? "none: every token, before and after" : "none: every earlier token";
    if (layer.window_sides === "both") return `${num(layer.window)} tokens on each side of the query`;
    if (layer.window_sides === "centred") return `${num(layer.window)} tokens: ${centredWords(layer.window)}`;
    if (name.startsWith("chunked")) return `chunks of ${num(layer.window)} tokens`;
    return compressed(sites) ? `the last ${num(layer.window)} uncompressed keys (compressed keys reach further)` :
      `the last ${num(layer.window)} tokens`;
  }

  /** The fact of a windowed kind of layer: [key of FACTS, detail]. */
  function windowFact(layer, sites) {
    if (layer.window_sides === "both") return ["window_both", `${num(layer.window)} tokens on each side of the query`];
    if (layer.window_sides === "centred") return ["window_centred", centredWords(layer.window)];
    if (String(layer.layer_type).startsWith("chunked")) return ["window_chunked", `chunks of ${num(layer.window)} tokens`];
    if (compressed(sites)) return ["window_compressed", `window of ${num(layer.window)} uncompressed keys`];
    return ["window", `window of ${num(layer.window)} tokens`];
  }

  /** The words added to a window that cuts nothing within the longest context shown (inspector_chart.js
   * idleWindow: [label, n]). */
  const idleWords = ([label, n]) => `; it reaches across the whole ${label}, ${num(n)}: no effect within it`;

  /** The query-key head's width where the rotary part is a slice of a wider head (latent attention,
   * DeepSeek-V4: the attention site's head_dim), else the layer's own dim. */
  const headWidth = (layer, sites) => {
    const attention = sites.find((s) => s.name === "attention");
    return attention && Number(attention.head_dim) > Number(layer.dim) ? attention.head_dim : layer.dim;
  };

  /** A warning's text as nodes: config keys, dotted names and --length in code, the rest as text. */
  const CODE = /(config(?:\[[^\]]+\])+|'[A-Za-z_][\w.]*'|\bposenc(?:\.\w+)+|--length|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b)/g;
  function warningNodes(el, text) { // split with one capture group: the odd parts are the matches
    return text.split(CODE).flatMap((part, i) => (part ? [i % 2 ? el("code", null, part) : document.createTextNode(part)] : []));
  }

  window.posencInspectorWords = Object.freeze({ MEANINGS, FACTS, NOT_ATTENTION, NOT_ROTATED, notAttention, windowWords, idleWords, windowFact, headWidth, warningNodes, link });
})();
