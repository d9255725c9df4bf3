"""Numbers in the prose of the experiment chapters come from data, and their claims are checked.

A number that restates a measured result is written ``[[value EXPR | FORMAT]]`` and rendered at
build time from the committed results (``hooks/values.py``, ``posenc.experiments.claims``);
comparisons are backed by hidden ``<!-- check: ... -->`` claims. This file fails when a page of
`CHAPTERS` types a number in its prose that is not a constant listed below (code blocks, inline
code, math, macros, comments, link targets and HTML are not prose), and runs every macro and
check of every page, so a broken one fails here before the site build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from values import CHECK, VALUE, expand_values

DOCS = Path(__file__).resolve().parents[1] / "docs"
CHAPTERS = ["extrapolation.md", "extension-designs-measured.md", "context-extension.md", "inference.md", "positions-2d.md", "beyond-alibi.md",
            "tiny-transformer.md", "architectures.md", "inside-attention.md", "rope.md", "rope-today.md",
            "alibi.md", "learned.md", "adding-to-embeddings.md",
            "relative.md", "start.md", "index.md",
            "pitfalls.md", "images-video.md",
            "engines.md", "why-position.md", "first-principles.md", "sinusoidal-formula.md",
            "sinusoidal-properties.md"]

# Constants every chapter may type: positions and counts of the first examples, and names
# ("1-D", "2-D", "Llama 3"). A measured result is never one of these.
ANYWHERE = {"0": "position 0, the first token", "1": "1-D, a distance of 1, one of", "2": "2-D, two of",
            "3": "Llama 3, three of"}

# The constants of each chapter: set-up values, example inputs, and numbers quoted from papers
# (with the paper cited beside them). Each with the reason it is not a result of this site.
ALLOWED: dict[str, dict[str, str]] = {
    "extrapolation.md": {
        "4": "eval multiples 1, 2, 4, 8; 4 heads; 4 sinks; 32L is 4 times 8L; exercise 2's 4 slopes",
        "8": "the multiples 1, 2, 4, 8; exercise 3's 8L",
        "15": "positions 0 to 15 hold the 8 key-value pairs",
        "16": "key ids 1 to 16; heads 16 wide",
        "17": "value ids 17 to 32",
        "32": "32 positions in a stretch; 32L; value ids up to 32; the example sequence of 32",
        "50": "an illustrative query position",
        "60": "the window of 60 keys beside 4 sinks (64 - 4)",
        "63": "the last trained position and offset (L - 1)",
        "64": "L, the training length",
        "128": "2L; a 128-wide head of a large model; positions 128 to 191 (a block of 64)",
        "191": "the end of the block 128 to 191",
        "500": "an illustrative query position; Ruoss et al.'s test lengths",
        "511": "the last position of 8L",
        "512": "8L",
        "2048": "Ruoss et al.'s position range; Press et al.'s training length",
        "1024": "Press et al.'s training length",
        "100": "Kazemnejad et al.'s model size (about 100 million parameters)",
        "12.0%": "Ruoss et al.'s average gain, quoted",
        "32768": "Chen et al.'s extended window, quoted",
        "1000": "Chen et al.'s fine-tuning steps, quoted",
        "2560": "Chen et al.'s effective window, quoted",
        "10,000": "Chen et al.'s step count, quoted",
        "200": "Chen et al.'s passkey steps, quoted",
        "400": "Peng et al.'s fine-tuning steps, quoted",
        "0.1%": "Peng et al.'s share of the pre-training data, quoted",
        "99%": "Peng et al.'s passkey accuracy, quoted",
        "10%": "the threshold of the cost comparison (a change of more than 10% in CPU time)",
        "10000": "RoPE's base",
        "0.9": "the chapter's threshold for a seed that learned the task",
        "90%": "exercise 3's threshold",
        "3.12": "Python 3.12, the version of the larger run's text",
    },
    "rope.md": {
        "4": "the key 4 to the right or left in exercise 1's answer (107 - 103)",
        "5": "the query position of the lead figure's second panel (an input)",
        "6": "the same panel's key position (an input)",
        "7": "exercise 1's key position (an input)",
        "9": "the same panel's query position (an input)",
        "100": "the decay caption's distance 100 (an input)",
        "103": "exercise 1's positions (inputs)",
        "107": "exercise 1's positions (inputs)",
        "128": "exercise 2's head width (an input)",
        "1000": "a start position; the decay caption's distance 1000 (inputs)",
        "10000": "RoPE's base",
        "100000": "the precision example's position (an input)",
        "500000": "Llama 3's base, quoted from Meta's args.py",
    },
    "rope-today.md": {
        "1.0": "DeepSeek-V3's mscale and mscale_all_dim (config values)",
        "4": "Llama 4, Gemma 4 (names); the examples' factor 4 (an input)",
        "8": "Gemma 3's linear factor 8 (config); the GQA check's 8 query heads (an input)",
        "16": "exercise 1's 16 pairs (its input)",
        "32": "exercise 1's 32 rotated features (its input)",
        "40": "DeepSeek-V3's factor 40 (config)",
        "40%": "Phi-2's partial_rotary_factor 0.4 as a share (config)",
        "48": "exercise 1's 48 features left unrotated (80 - 32)",
        "64": "GPT-J's 64 rotated features (config); Gemma 3's 64 pairs",
        "80": "exercise 1's head width (its input)",
        "128": "a 128-wide head (an input)",
        "256": "GPT-J's head width (config)",
        "1024": "Gemma 3's window (config)",
        "2048": "the example's 2048 keys; exercise 1's length (inputs)",
        "4097": "L + 1 in the LongRoPE example (an input)",
        "10000": "RoPE's base",
        "500000": "Llama 3's base",
    },
    "extension-designs-measured.md": {
        "4": "Llama 4 (a model's name)",
        "8": "8.4e4 for 8k tokens, Xu et al.'s Table 2, quoted",
        "16": "heads 16 wide (the set-up); ReRoPE's factor of 16, quoted from its patch",
        "32": "the chunk of 32 (L/2, a setting); the 32 tokens before the queries at L (a setting)",
        "50": "the smallest base trained (a setting)",
        "63": "the last trained offset (L - 1)",
        "64": "L, the training length",
        "128": "a 128-wide head (Xu et al.'s table); width 128 of the larger configuration (a setting)",
        "200": "a base trained (a setting)",
        "500": "a base trained (a setting); Xu et al.'s 500 tokens, quoted",
        "1024": "ReRoPE's window of 1024 for a 4k model, quoted from its README",
        "10,000": "the base of the other studies' RoPE model (a setting)",
        "100": "Xu et al.'s base 100, quoted",
        "0.9": "the threshold for a seed that learned the task",
    },
    "context-extension.md": {
        "4": "the running example's factor s = 4",
        "8": "Llama 3.1's released factor",
        "16": "Llama 3.1's length ratio, 131072 / 8192",
        "32": "YaRN's beta_fast, 32 turns",
        "48": "the pair the example looks at",
        "128": "the running example's head width",
        "3.1": "Llama 3.1, the model's name",
        "600": "Chen et al.'s ratio of bounds, quoted from the cited abstract",
        "1000": "Chen et al.'s fine-tuning steps, quoted",
        "0.25": "1/s for s = 4: the fastest pair's angle between neighbours",
        "4095": "L - 1, the largest trained offset of the running example",
        "4096": "L, the running example's trained length",
        "10000": "the running example's base",
        "16384": "4L, the running example's extended length",
        "131072": "Llama 3.1's released maximum length",
        "500000": "Llama 3.1's released base",
    },
    "inference.md": {
        "4": "StreamingLLM's 4 sinks; exercise answers (positions of a 5-token prompt, the sink at 4)",
        "5": "exercise 1's prompt of 5 tokens",
        "7": "exercise 2's window, tokens 7 to 9",
        "8": "8L; exercise 1's width of 8",
        "9": "exercise 2's window, tokens 7 to 9",
        "10": "exercise 2's 10 decoded tokens",
        "11": "the decoding examples' positions 11 and 12",
        "12": "the decoding examples' positions 11 and 12; a 12 x 12 bias",
        "64": "L, the training length",
        "511": "the last position of 8L",
        "512": "8L",
        "10,000": "an illustrative step",
        "5.23": "the pinned transformers version",
    },
    "positions-2d.md": {
        "4": "a grid of 4 columns; exercise 2's image of 4 tokens",
        "6": "the example image of 6 tokens; exercise 2's answer (index 6)",
        "8": "exercise 1's 8 features",
        "9": "exercise 2's answer: 9 tokens",
        "16": "Qwen2-VL's mrope_section [16, 24, 24]",
        "23": "the coordinates 0 to 23 of a 24 x 24 grid",
        "24": "Qwen2-VL's mrope_section [16, 24, 24]",
        "64": "the example head width; Qwen2-VL's 64 pairs",
        "100": "the base the example uses for images",
        "128": "Qwen2-VL's head width",
        "10%": "chance for ten digits",
    },
    "beyond-alibi.md": {
        "4": "the tiny transformer's 4 heads",
        "8": "8 heads; the CoPE sentence's word position 8; exercise 3's length 8",
        "10": "the CoPE sentence's token position 10",
        "15": "Ruoss et al.'s 15 tasks, quoted",
        "63": "the last of 64 positions (exercise 3)",
        "64": "head width 64; 64 positions (exercise 3)",
        "512": "xPos's scale base B; a sequence of 512 tokens",
        "3000": "the distance the xPos example looks at",
        "4096": "an illustrative length past training",
        "6000": "Ruoss et al.'s 6000 models, quoted",
        "8191": "the last position of an 8192-token input",
        "65504": "float16's largest number",
        "0.01": "KERPLE's eps, the authors' default",
        "12.0%": "Ruoss et al.'s average gain, quoted",
    },
    "architectures.md": {
        "0.25": "Qwen3-Next's partial_rotary_factor, from its config",
        "1.5": "exercise 1's threshold; the sinks example's logit",
        "4": "Llama 4, the model's name; the tiny configs' window and NoPE step",
        "5": "the tiny Llama 4 config's chunk",
        "5.23": "the pinned transformers version",
        "6": "the tiny Ministral 3 config's step",
        "8": "Gemma 3's linear factor, from its config",
        "10": "the logit of the matching key in the fading example",
        "32": "gpt-oss's YaRN factor, from its config",
        "64": "DeepSeek-V3's rotated width and MiniMax-M2's, from their configs; exercise 3's sizes",
        "128": "gpt-oss's window, DeepSeek-V3's heads, MiniMax-M2's head width, from their configs; exercise 3",
        "256": "Qwen3-Next's head width, from its config",
        "192": "DeepSeek-V3.2's query-key head width (128 + 64), from its config",
        "16": "the rotated width of the tiny DeepSeek-V4-like config of the check",
        "512": "exercise 3's latent width (DeepSeek-V3's)",
        "62": "Gemma 3 27B's layer count, from its config",
        "1,024": "Gemma 3's window, from its config",
        "4,096": "Command R7B's window, from its config",
        "8,192": "ModernBERT's context, from its config",
        "10,000": "Gemma 3's and ModernBERT's local base, from their configs",
        "160,000": "ModernBERT's global base, from its config",
    },
    "tiny-transformer.md": {
        "4": "4 heads; a hidden width of 4 x dim",
        "8": "the first example's width 8",
        "20": "the first example's 20 positions",
        "32": "T5's default of 32 buckets",
        "64": "width 64; a learned table of 64 rows",
        "100": "the first example's vocabulary of 100",
        "128": "T5's default maximum distance of 128",
    },
    "alibi.md": {
        "4": "the first example's 4 heads; exercise 2's key 4 positions away (inputs)",
        "5": "the first example's 5 positions (an input)",
        "7": "head 7, the last of 8 (an index)",
        "8": "8 heads: the paper's head count (section 3) and the examples' (an input)",
        "12": "the 12-head example (an input)",
        "16": "16 heads: the paper's other head count (section 3), the 16-head sequence",
        "32": "the nearest 32 keys, the input of the values beside it",
        "48": "BLOOM's 112 heads past the 64 of a power of two (112 - 64; a hidden check)",
        "64": "the 64-token example (an input); BLOOM's first 64 heads (a hidden check)",
        "112": "BLOOM's n_head, from its config.json",
        "128": "the head counts 1 to 128 the check runs (inputs)",
        "176": "BLOOM's 176 billion parameters, from its model card",
        "1024": "Press et al.'s training length, quoted from the abstract",
        "2048": "Press et al.'s test and sinusoidal training length, quoted from the abstract",
        "2,048": "the length of the values beside it (an input)",
    },
    "learned.md": {
        "4": "the offset example's position 4; exercise 2's rows 3 and 4 (inputs)",
        "5": "positions 5 and 6, an illustration",
        "6": "positions 5 and 6, an illustration",
        "50": "position 50, an illustration; 1 / 0.02, the ratio of the quoted standard deviations",
        "100": "1 / 0.01, the ratio of the quoted standard deviations",
        "0.01": "the original GPT-2 code's wpe stddev, quoted from src/model.py",
        "0.02": "BERT's and Hugging Face GPT-2's initializer_range, from their configs",
        "510": "the offset of the example beside it (an input)",
        "512": "BERT's max_position_embeddings (config); the examples' max_len (an input)",
        "768": "exercise 1's width (an input)",
        "5000": "the misquoted max_len of the errata entry and an illustrative position",
        "5001": "the misquote of the errata entry",
        "4999": "5000 - 1, the last row of a 5000-row table",
    },
    "adding-to-embeddings.md": {
        "0.01": "the original GPT-2 code's position table stddev, quoted (see learned.md)",
        "0.02": "BERT's and GPT-2's initializer_range, from their configs (an input of the set-ups)",
        "0.1": "the paper's dropout rate, quoted from section 5.4",
        "8": "the example's 8-dimensional word vectors (an input)",
        "64": "the example's concatenated block of 64 (an input)",
        "512": "the 512 positions of the example (an input)",
        "10,000": "the example's 10,000 random rows (an input)",
    },
    "relative.md": {
        "1.0": "T5Attention's scaling, transformers 5.23 modeling_t5.py line 197 (code)",
        "5": "the shifted positions 5, 6, 7 and positions 0 to 5 (inputs)",
        "6": "the shifted positions 5, 6, 7; Shaw's row 6 = 2k for k = 3 (inputs)",
        "7": "the shifted positions 5, 6, 7; the exact distances 0 to 7 (b/2 - 1 for b = 16)",
        "8": "the first log bucket of the encoder (b/2 for b = 16)",
        "10": "the start position 10 (an input); bucket 10 = 8 + 2 (a hidden exact check)",
        "12": "bucket 12 = 8 + 4 (a hidden exact check)",
        "14": "bucket 14 = 8 + 6 (a hidden exact check)",
        "15": "the encoder's last bucket (b - 1 for b = 16); the decoder's exact distances 0 to 15",
        "16": "b = 16 per direction (32 / 2); distance 16 on a boundary (a hidden exact check)",
        "31": "the decoder's last bucket (b - 1 for b = 32)",
        "32": "T5's num_buckets (config default); distance 32 on a boundary (a hidden exact check)",
        "63": "the last offset of exercise 2's window of 64 (an input)",
        "64": "exercise 2's window (an input); distance 64 on a boundary (a hidden exact check)",
        "101": "an illustrative pair of distances",
        "102": "an illustrative pair of distances",
        "128": "T5's max_distance (config default); offset -128 of the table (an input)",
        "300": "an illustrative offset past training",
        "500": "offset -500 of the table (an input)",
        "728": "the near-boundary distance for max_distance=939 (a hidden exact check)",
        "1000": "the tests' range of offsets, -1000 to 1000",
    },
    "start.md": {
        "4": "step 4's heading; Llama 3.1's high_freq_factor 4 (published config, in the table); Llama 4 Scout (a name)",
        "5": "step 5's heading",
        "6": "step 6's heading",
        "7": "step 7's heading",
        "8": "step 8's heading; the example's M_5 takes position 3 to 8; Llama 3.1's factor 8 (published config)",
        "10": "an illustrative 10-word sentence (step 2)",
        "100": "an illustrative 100-word sentence (step 2)",
        "5,000": "an illustrative position (step 2)",
        "517": "an illustrative position, 'word 517' (step 2)",
        "30": "the example's position 30 (step 4)",
        "35": "the example's position 35 = 30 + 5 (step 4)",
        "103": "the example's query position (step 5)",
        "101": "the example's key position (step 5)",
        "10000": "the sinusoidal base (Vaswani et al. 3.5) and the example head's base",
        "4096": "the example head's training length (a setting of step 7's code and figures)",
        "4095": "the largest offset within 4096 positions (4096 - 1)",
        "3.1": "Llama 3.1 (a model's name)",
        "8192": "Llama 3.1's original_max_position_embeddings (published config, in the table)",
        "500000": "Llama 3.1's rope_theta (published config, in the table)",
        "32,768": "Qwen2.5's context before YaRN, quoted from its model card ('Processing Long Texts')",
    },
    "index.md": {
        "4": "step number of the core path's list",
        "5": "step number",
        "6": "step number",
        "7": "step number",
        "8": "step number",
    },
    "pitfalls.md": {
        "4": "the sinks example's query at 4 and window 3 and 4; the timestamp's 4 text tokens; Llama 4; "
             "float16's step near 5000 (2^12 / 2^10, printed in the solution) (inputs, names, format)",
        "5": "position 5 of the example; transformers 5 (a version); the exercise's position",
        "7": "the cached prompt's 7 tokens (an input)",
        "8": "the wrong position 8 (an input); the temperature's step of 8 (an input); bfloat16's 8 "
             "significant bits; the 8 x 8 tokens of an image; Llama 3's factor 8 in Meta's code",
        "11": "float16's 11 significant bits (the format)",
        "16": "the windowed table's 16 rows; the 16 x 16-patch image (inputs)",
        "32": "Llama 3.2 1B and 3B's published factor (config)",
        "40": "the windowed example's 40 tokens (an input)",
        "60": "pair 60 of a 128-wide head (Qwen3-VL's sections 24, 20, 20: 3 x 20 interleaved)",
        "61": "pair 61 (as pair 60)",
        "62": "pair 62 (as pair 60)",
        "63": "pair 63 (as pair 60); max_len - 1 tokens of context for stride 1 (64 - 1)",
        "64": "the windows of 64 (an input: max_len, the trained length, a stride)",
        "128": "Qwen3-VL's head width (config)",
        "512": "the extrapolation experiment's longest window, 8L (a setting)",
        "1000": "the windowed input of 1000 tokens (an input)",
        "2048": "float16's last exact run of integers, 2^11 (the format)",
        "4096": "a position the tests compare at (an input)",
        "100,000": "a position the tests compare at (an input)",
        "10001": "the example's position (an input)",
        "5000": "exercise 2's position (an input)",
        "8191": "8192 - 1, the last position before Llama 4's temperature steps",
        "8192": "Llama 4's floor_scale (configuration_llama4.py, default)",
        "0.1": "a scaling factor the errata quotes (an input)",
        "0.01": "the example's threshold in radians (an input)",
        "3.2": "Llama 3.2 (a name)",
        "5.23": "the pinned transformers version",
        "5,000,000": "Qwen3-VL's rope_theta (config)",
    },
    "images-video.md": {
        "0.42": "the pinned diffusers version (0.42.1)",
        "5.23": "the pinned transformers version",
        "2.0": "DINOv3ViTConfig's pos_embed_rescale (config)",
        "2.1": "Wan 2.1 (a name)",
        "4": "Llama 4 (a name); the V-JEPA 2 example's configured 4 x 4 grid; the studies' 4 pairs per "
             "axis and trained side of 4 (settings)",
        "8": "about 8 seconds: latent frame 48 x 4 frames / 24 fps (quoted inputs)",
        "10": "Flux2Pipeline._prepare_image_ids' scale 10 (code); RoPE-Mixed's mixed base 10 (the authors' code)",
        "16": "axes_dims_rope (16, 56, 56) of FLUX.1 and HunyuanVideo (config); 16 = 4 x 4 ids (an input)",
        "20": "the second reference image's time id, 10 + 10 (the code's scale)",
        "24": "Cosmos's base_fps (transformer_cosmos.py, default)",
        "32": "FLUX.2's axes_dims_rope (32, 32, 32, 32) (config)",
        "48": "the latent frame of the authors' identify_k example (riflex_utils.py), quoted",
        "56": "axes_dims_rope (16, 56, 56) (config)",
        "66": "the latent frames of 261 video frames, (261 - 1) / 4 + 1 (HunyuanVideo's VAE)",
        "100": "DINOv3's rope_theta (config); RoPE-Mixed's axial base (the authors' code); the studies' base",
        "128": "FLUX.1's and a video model's head width (config, an input)",
        "256": "HunyuanVideo's rope_theta (config)",
        "261": "the extended video of the authors' README (129 frames doubled), quoted",
        "10000": "the base fixed in FLUX.1's, Wan's, CogVideoX's, V-JEPA 2's and Pixtral's code",
    },
    "engines.md": {
        "0.0": "ggml-python 0.0.45, the version read",
        "0.3": "llama-cpp-python 0.3.36 and llama-models 0.3.0, the versions read",
        "0.6": "torchtune 0.6.1, the version read",
        "5.23": "the pinned transformers version",
        "5": "transformers 5 (a version); pair indices 2, 5, ..., 59 of modeling_qwen3_vl.py lines 406-415",
        "3.1": "Llama 3.1 (a name)",
        "3.2": "Llama 3.2 (a name)",
        "4": "Llama 4 (a name); Llama 3's high_freq_factor 4 in Meta's code; the Keras example's factor "
             "(an input); pair indices 1, 4, ..., 58 (code)",
        "8": "Llama 3's factor 8 fixed in Meta's apply_scaling (llama_models/llama3/model.py line 47); "
             "the float32 budget's k = 8 (the tests' setting)",
        "20": "Qwen3-VL's mrope_section (24, 20, 20) (config)",
        "24": "Qwen3-VL's mrope_section (24, 20, 20) (config)",
        "32": "Llama 3.2 1B and 3B's published factor (config)",
        "58": "the last height pair, 3 x 20 - 2 (modeling_qwen3_vl.py lines 406-415)",
        "59": "the last width pair, 3 x 20 - 1 (the same lines)",
        "60": "the pairs past the interleaved part, 60 to 63 (3 x 20; sections of the config)",
        "61": "pair 61 (as pair 60)",
        "62": "pair 62 (as pair 60)",
        "63": "pair 63, the last of 64 (as pair 60)",
        "64": "64 pairs of a 128-wide head; a 64-wide head (an input); ggml's budget k = 64 (the tests' setting)",
        "128": "Qwen3-VL's head width (config)",
        "1,000": "the prompt of 1,000 tokens (an input)",
        "4,096": "Phi-3.5-mini's original_max_position_embeddings (config); the tests' trained length",
        "8,192": "Llama 3's original length in Meta's code (model.py line 50)",
        "10,000": "torchtune's Phi-3 component builder's default rope_base (its source)",
        "32,768": "Qwen3's native context, from its model card",
        "80,000": "the length quoted from llama-models issue 241",
        "250,000": "Phi-4's rope_theta (config)",
        "262,144": "Qwen3-VL's original_max_position_embeddings (config, the example's input)",
        "500,000": "the tests' largest position (an input)",
        "1,000,000": "Qwen3's rope_theta (config)",
    },
    "first-principles.md": {
        "4": "requirement 4; Attempt 4; exercise 3's sentence of 4 words",
        "5": "requirement 5",
        "7": "exercise 3's sentence of 7 words",
        "12": "the first width of the collapsed check (every even d from 12 to 512)",
        "512": "512 positions (Attempt 4's input); the last width of the check; d = 512",
        "0.1": "a frequency chosen by hand (1, 0.1, 0.01, 0.001)",
        "0.01": "a frequency chosen by hand",
        "0.001": "a frequency chosen by hand",
        "0.02": "BERT's and GPT-2's initializer_range (transformers 5.23 configuration_bert.py:54, configuration_gpt2.py:89)",
        "0.0001": "the bound of '710 positions are within 0.0001 of 113 turns' (a hidden check)",
        "113": "113 turns (hidden check beside it)",
        "355": "355/113, the fraction for pi (hidden check beside it)",
        "4%": "the bound of the d = 512 wavelength shortfall (hidden check beside it)",
        "1,000": "the first 1,000 positions measured (an input)",
        "10,000": "the base",
        "100,000": "an illustrative position of a book",
    },
    "sinusoidal-formula.md": {
        "6": "d = 6 (the river bank example); dims 6 and 7",
        "7": "dims 6 and 7; exercise 1's dimension 7 (a column named)",
        "8": "d = 8 (the worked example)",
        "50": "a table of 50 positions (input)",
        "100": "100 positions (the heatmap's input)",
        "128": "d = 128 (input)",
        "256": "the 256 pairs of d = 512",
        "1000": "exercise 3's target wavelength (input)",
        "10000": "the base",
        "0.1": "the threshold of 'vary by more than 0.1' (a setting)",
        "0.99": "the tutorials' wrong rounding of cos 0.1, quoted (errata #rounded-tables-of-the-d8-example)",
    },
    "sinusoidal-properties.md": {
        "6": "position 6 (named; its similarity is rendered)",
        "7": "the offset 7 (input); float32's about 7 significant digits",
        "10": "k = 10 and position 10 (inputs)",
        "13": "the first 13 offsets printed (input)",
        "64": "positions 0 to 63, a 64 x 64 matrix (input)",
        "500": "position 500; least squares over 500 positions (inputs)",
        "512": "d = 512 (input)",
        "1,000": "1,000 positions (input)",
        "2,000": "the first 2,000 positions (input)",
        "10,000": "10,000 positions (input)",
    },
    "inside-attention.md": {
        "0.1": "the examples' forget gate on a full stop",
        "0.9": "the examples' forget gate on a word",
        "4": "the stick-breaking example's nearer key, at index 4",
        "8": "the cache table's head width (its model: width 32, four heads)",
        "32": "the cache table's model width",
    },
}


FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
LOCATOR = re.compile(r"(?:sections?|§|Table|Figure|eq\.|equations?|appendix|appendices|step|version|exercise|lines?|issues?)\s+"
                     r"[\dA-Z][\w.–-]*(?:\s*(?:,|and|to|–)\s*[\dA-Z][\w.–-]*)*", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?%?(?![\w])")


def prose(text: str) -> str:
    """The text of a page a reader reads as sentences: without code (fenced and inline), math,
    macros, hidden checks, link targets, attribute lists, HTML tags and citation locators. Line
    breaks are kept, so line numbers stay those of the file."""
    def blank(match: re.Match[str]) -> str:
        return "\n" * match[0].count("\n")

    text = re.sub(r"\A---\n.*?\n---\n", blank, text, flags=re.DOTALL)  # front matter: the page's metadata
    text = FENCE.sub(blank, text)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.DOTALL)
    text = re.sub(r"\\\[.*?\\\]|\\\(.*?\\\)|\$\$.*?\$\$", blank, text, flags=re.DOTALL)
    text = re.sub(r"\[\[.*?\]\]", " ", text)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\]\([^)\s]*\)|\]\[[^\]]*\]", "]", text)
    text = re.sub(r"\{\s*[#:.][^}]*\}", " ", text)
    text = re.sub(r"<[^>\n]+>", " ", text)
    text = re.sub(r"\b(?:19\d\d|20[0-3]\d)\b", " ", text)  # years
    return LOCATOR.sub(lambda match: " " + "\n" * match[0].count("\n"), text)  # a locator may break a line


def typed_numbers(page: str) -> list[tuple[int, str, str]]:
    """``(line, number, line text)`` for every number typed in the page's prose that is not allowed."""
    allowed = ANYWHERE | ALLOWED.get(page, {})
    found = []
    for number, line in enumerate(prose((DOCS / page).read_text(encoding="utf-8")).split("\n"), start=1):
        for match in NUMBER.finditer(line):
            word = match[0].rstrip(",")
            if word not in allowed:
                found.append((number, word, line.strip()))
    return found


def test_prose_keeps_code_math_and_macros_out() -> None:
    text = ("Ratio [[value lm.rope@8L | .2f]] at `x = 5` and \\(d = 64\\), section 3.5, in 2023.\n"
            "```python\nprint(12)\n```\n<!-- check: lower(a, b) -->\n[link](page.md#7) 13 and 2.5%")
    assert NUMBER.findall(prose(text)) == ["13", "2.5%"]
    assert NUMBER.findall(prose("---\nassumes: steps 5 to 7\n---\n\nWidth 8.")) == ["8"]
    assert prose("---\na: 1\n---\nx").count("\n") == 3  # line numbers stay those of the file


def test_prose_keeps_source_and_issue_locators_out() -> None:
    """A file's line numbers and an issue's number locate a source; they are no result."""
    text = ("Its rule (rope.py, lines 81-93 and\n231-238; line 1634), issue 166 and [issue 241].\n"
            "Lines 7 to 9 of the table, then 12 heads.")
    assert NUMBER.findall(prose(text)) == ["12"]
    assert prose(text).count("\n") == 2  # a locator broken over two lines keeps the line count


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_prose_types_no_result(page: str) -> None:
    """Every number in the prose is rendered by a macro or is a listed constant."""
    typed = typed_numbers(page)
    assert not typed, f"{page}: numbers typed in prose (write [[value ...]] or list the constant):\n" + \
        "\n".join(f"  line {line}: {number!r} in {text[:100]!r}" for line, number, text in typed)


@pytest.mark.parametrize("page", sorted(path.name for path in DOCS.glob("*.md")))
def test_every_value_and_check_of_a_page_holds(page: str) -> None:
    """Every ``[[value]]`` renders and every hidden check holds on the committed results."""
    text = (DOCS / page).read_text(encoding="utf-8")
    out = expand_values(text, page)
    assert "[[value" not in out and not CHECK.search(out)
    if VALUE.search(text) or CHECK.search(text):
        assert out != text


@pytest.mark.parametrize("page", sorted(ALLOWED))
def test_every_allowed_constant_is_used(page: str) -> None:
    """The lists stay short: a constant no longer typed on its page is taken off."""
    text = prose((DOCS / page).read_text(encoding="utf-8"))
    typed = {match[0].rstrip(",") for match in NUMBER.finditer(text)}
    assert set(ALLOWED[page]) <= typed, f"{page}: listed but not typed: {sorted(set(ALLOWED[page]) - typed)}"


# ---------------------------------------------------------------------------------------------
# comparisons with a bound, a paper's number or a config value


def test_a_list_against_a_bound_fails_on_the_one_that_is_not_below() -> None:
    """Issue 34, item 1: "bases 200, 500 and 2,000 lie below the bound" is false for 2,000; the
    bound here is recomputed by posenc (Xu et al.'s search), not read from the claims module."""
    from posenc.experiments.claims import ClaimError, check
    from posenc.rope_base import rope_base_lower_bound

    bound = rope_base_lower_bound(16, 64)
    assert 500 < bound < 2000
    check("below(200, 500, base:lower_bound.base)")
    check(f"below(200, 500, {bound})")
    with pytest.raises(ClaimError, match=r"2000 = 2000: not all below 1706\.6 \(base:lower_bound\.base\)"):
        check("below(200, 500, 2000, base:lower_bound.base)")
    check("above(base:bases.2000.base, base:bases.10000.base, posenc: rope_base.rope_base_lower_bound(16, 64))")


@pytest.mark.parametrize(("claim", "holds"), [
    ("at_most(2, 2)", True), ("below(2, 2)", False), ("at_least(2, 2)", True), ("above(2, 2)", False),
    ("at_least(3, 2.5, 2)", True), ("at_most(1, 3, 2)", False),
    ("near(0.52, 0.5, 0.02)", True), ("near(0.53, 0.5, 0.02)", False),
    ("below(1, posenc: [alibi_slopes(4)[0], 3][1])", True),  # brackets keep a posenc argument whole
])
def test_bound_claims_draw_the_line_where_they_say(claim: str, holds: bool) -> None:
    from posenc.experiments.claims import ClaimError, check

    if holds:
        check(claim)
    else:
        with pytest.raises(ClaimError, match="not"):
            check(claim)


def test_every_seed_counts_against_a_bound() -> None:
    """A measure with seeds passes only when every seed does: KERPLE's ratio at 8L to L is below 1
    for each seed but its highest seed is not below its mean."""
    from posenc.experiments.claims import ClaimError, check, measure

    kerple = measure("lm.kerple@8L").values()
    ratio = [a / b for a, b in zip(kerple, measure("lm.kerple@L").values())]
    check(f"below(lm.kerple@8L / @L, {max(ratio) + 1e-9})")
    with pytest.raises(ClaimError):
        check(f"below(lm.kerple@8L / @L, {sum(ratio) / len(ratio)})")


BOUND_WORDS = re.compile(r"\b(?:below|above|under|over|exceeds?|beyond)\s+(?:the|its|their|this|that)\s+"
                         r"(?:lower\s+|upper\s+)?(?:bound|threshold|limit)\b", re.IGNORECASE)
BOUND_CHECK = re.compile(r"(?<![\w])(?:below|above|at_most|at_least|within|near|mean_within)\s*\(")


def bound_sentences_without_check(text: str) -> list[str]:
    """The paragraphs (or list items) of ``text`` that compare a rendered number with a bound or a
    threshold in words ("lies above the bound") and carry no check of a bound claim."""
    text = FENCE.sub(lambda match: "\n" * match[0].count("\n"), text)
    found = []
    for block in re.split(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*]|\d+\.)\s)", text):
        if "[[value" in block and BOUND_WORDS.search(block):
            claims = " ".join(re.findall(r"<!--\s*check:(.*?)-->", block, re.DOTALL))
            if not BOUND_CHECK.search(claims):
                found.append(" ".join(block.split())[:120])
    return found


def test_the_bound_guard_finds_an_unchecked_comparison() -> None:
    unchecked = "Base [[value base:bases.2000.base | ,.0f]] lies above the bound.\n\nNext."
    assert bound_sentences_without_check(unchecked) == ["Base [[value base:bases.2000.base | ,.0f]] lies above the bound."]
    checked = unchecked.replace(".\n\n", ".\n<!-- check: above(base:bases.2000.base, base:lower_bound.base) -->\n\n")
    assert bound_sentences_without_check(checked) == []
    counted = checked.replace("above(base:bases.2000.base", "count_at_least(base:bases.2000.base, 1")
    assert bound_sentences_without_check(counted) != []  # a count is not a bound claim


@pytest.mark.parametrize("page", sorted(path.name for path in DOCS.glob("*.md")))
def test_a_rendered_number_compared_with_a_bound_is_checked(page: str) -> None:
    """Issue 34, item 2: a sentence that puts a rendered number above or below a bound or a
    threshold carries a hidden ``below``/``above``/``at_least``/``at_most``/``within``/``near``
    check in its paragraph, so that the build fails when the comparison stops holding."""
    missing = bound_sentences_without_check((DOCS / page).read_text(encoding="utf-8"))
    assert not missing, f"{page}: compared with a bound without a check:\n  " + "\n  ".join(missing)
