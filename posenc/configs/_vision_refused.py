r"""The vision and video model types of transformers 5.23.0 whose modeling file rotates q and k
somewhere but which `posenc.configs.vision.read_vision_config` does not read, each with why.

Two kinds of reason:

* ``"part"``: nothing built from this config rotates; the rotation in its file belongs to another
  model, named by the class that rotates (often one that posenc reads: the language model by
  ``read_config``, SAM 2's memory attention by ``read_vision_config``).
* ``"not_read"``: it rotates, and posenc does not read it yet; the reason says what it does.

``read_vision_config`` gives the reason when it refuses one of these. tests/test_config_vision_sweep.py
walks the model-type table and checks that every rotating image or video type is read or listed here,
and that each reason is true of transformers' code (what the classes built from the config call).
"""

from __future__ import annotations

_TEXT = "its language model's attention"

#: model type -> (kind, the class of its file that rotates, the reason in words).
REFUSED: dict[str, tuple[str, str, str]] = {
    "chameleon_vqgan": ("part", "ChameleonAttention",
                        f"Chameleon's image tokenizer (a VQ-VAE) does not rotate; {_TEXT} does"),
    "emu3_vqgan": ("part", "Emu3Attention", f"Emu3's image tokenizer (a VQ-VAE) does not rotate; {_TEXT} does"),
    "glm_image_vqmodel": ("part", "GlmImageTextAttention",
                          f"GLM-Image's image tokenizer (a VQ-VAE) does not rotate; {_TEXT} does"),
    "cosmos3_edge_vision": ("part", "Cosmos3EdgeTextAttention", f"its vision encoder does not rotate; {_TEXT} does"),
    "glm_image_vision": ("part", "GlmImageTextAttention", f"its vision encoder does not rotate; {_TEXT} does"),
    "granite_docling_vision": ("part", "GraniteDoclingTextAttention",
                               f"its vision encoder does not rotate; {_TEXT} does"),
    "hunyuan_vl_vision": ("part", "HunYuanVLDenseV1Attention", f"its vision encoder does not rotate; {_TEXT} does"),
    "idefics_vision": ("part", "IdeficsAttention", f"its vision encoder does not rotate; {_TEXT} does"),
    "idefics_perciever": ("part", "IdeficsAttention",
                          f"its perceiver resampler is built from the parent's config and does not rotate; {_TEXT} "
                          "does"),
    "mllama_vision_model": ("part", "MllamaTextSelfAttention",
                            f"its vision encoder adds learned position embeddings and does not rotate; {_TEXT} does"),
    "molmo2_vision": ("part", "Molmo2Attention", f"its vision encoder does not rotate; {_TEXT} does"),
    "molmo2_adapter": ("part", "Molmo2Attention", f"its adapter does not rotate; {_TEXT} does"),
    "phi4_multimodal_vision": ("part", "Phi4MultimodalAttention", f"its vision encoder does not rotate; {_TEXT} does"),
    "gemma3n_vision": ("part", "Gemma3nTextAttention",
                       f"a timm tower built by AutoModel (modeling_gemma3n.py:1928), no module of its file; {_TEXT} "
                       "rotates"),
    "gemma4_unified_vision": ("part", "Gemma4UnifiedTextAttention",
                              "its patches get learned factorized 2-D embeddings and no attention of their own "
                              f"(modeling_gemma4_unified.py:820-884); {_TEXT} rotates them as tokens"),
    "unlimited_ocr_vision": ("part", "UnlimitedOcrTextAttention", f"its vision model does not rotate; {_TEXT} does"),
    "unlimited_ocr_vision_encoder": ("part", "UnlimitedOcrTextAttention",
                                     f"its vision encoder does not rotate; {_TEXT} does"),
    "unlimited_ocr_sam_vision_model": ("part", "UnlimitedOcrTextAttention",
                                       f"its SAM-style image encoder does not rotate; {_TEXT} does"),
    "deepseek_ocr2_sam_vision_model": ("part", "DeepseekOcr2VisionAttention",
                                       "its SAM-style image encoder does not rotate; the vision model after it "
                                       "(deepseek_ocr2_vision) does"),
    "sam2_video_mask_decoder": ("part", "Sam2VideoRoPEAttention",
                                "the mask decoder does not rotate; the memory attention does (read as sam2_video)"),
    "sam2_video_prompt_encoder": ("part", "Sam2VideoRoPEAttention",
                                  "the prompt encoder does not rotate; the memory attention does (read as sam2_video)"),
    "edgetam_video_mask_decoder": ("part", "EdgeTamVideoRoPESelfAttention",
                                   "the mask decoder does not rotate; the memory attention does (read as "
                                   "edgetam_video)"),
    "edgetam_video_prompt_encoder": ("part", "EdgeTamVideoRoPESelfAttention",
                                     "the prompt encoder does not rotate; the memory attention does (read as "
                                     "edgetam_video)"),
    "sam3_tracker_video_mask_decoder": ("part", "Sam3TrackerVideoRoPEAttention",
                                        "the mask decoder does not rotate; the memory attention does (read as "
                                        "sam3_tracker_video)"),
    "sam3_tracker_video_prompt_encoder": ("part", "Sam3TrackerVideoRoPEAttention",
                                          "the prompt encoder does not rotate; the memory attention does (read as "
                                          "sam3_tracker_video)"),
    **{name: ("part", "Sam3ViTRoPEAttention", f"SAM 3's {what} does not rotate; its ViT does (read as sam3_vit_model)")
       for name, what in (("sam3_detr_encoder", "DETR encoder"), ("sam3_detr_decoder", "DETR decoder"),
                          ("sam3_geometry_encoder", "geometry encoder"), ("sam3_mask_decoder", "mask decoder"))},
    "sapiens2_head": ("part", "Sapiens2Attention",
                      "the task head's settings (built into the parent's heads) do not rotate; the backbone does "
                      "(read as sapiens2)"),
    "deepseek_ocr2_vision": ("not_read", "DeepseekOcr2VisionAttention",
                             "it rotates in 1-D, by place in one sequence (its patch tokens, then its query tokens: "
                             "position_ids 0, 1, 2, ..., modeling_deepseek_ocr2.py:926-927): a language model's "
                             "RoPE over image tokens, not a reading over rows and columns"),
    "lightglue": ("not_read", "LightGlueAttention",
                  "it rotates by a learned projection of each keypoint's (x, y) (LightGluePositionalEncoder, "
                  "modeling_lightglue.py:83-97): the speeds are weights of the checkpoint, not settings of the "
                  "config"),
}

#: Those that rotate q and k with their own classes (checked by the sweep test, like the parts).
NOT_READ = tuple(sorted(t for t, (kind, _, _) in REFUSED.items() if kind == "not_read"))


def refusal(model_type: object) -> str:
    """Why ``model_type`` is not read, for read_vision_config's message ("" where it is not listed)."""
    if not isinstance(model_type, str) or model_type not in REFUSED:
        return ""
    kind, _, reason = REFUSED[model_type]
    return f" ({reason})" if kind == "part" else f" ({reason}; it rotates, posenc does not read it yet)"
