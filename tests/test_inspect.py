"""``python -m posenc.inspect``: what it says about every zoo config, and one clear line for bad input.

Expected numbers are computed here from the formulas (wavelength 2*pi*b^(2i/d)), not by the code
under test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from posenc.configs import _table as _rope_table
from posenc.inspect import describe, main

ZOO = sorted((Path(__file__).resolve().parents[1] / "posenc" / "zoo").glob("*.json"))
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
         "rope_theta": 500000.0, "max_position_embeddings": 8192}


@pytest.mark.parametrize("path", ZOO, ids=[p.stem for p in ZOO])
def test_every_zoo_config(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = json.loads(path.read_text())
    known = config["model_type"] in _rope_table.model_types()
    assert main([str(path)]) == (0 if known else 2)
    out, err = capsys.readouterr()
    if known:
        # the text model's type as transformers reads it (Kimi K2.5's kimi_k2 is built as deepseek_v3)
        text_type = _rope_table.text_model_type(config["model_type"], config.get("text_config", config)["model_type"])
        assert out.startswith(f"model type {text_type}") and not err
    else:  # transformers lacks the model type: the layout is asked for, in one line
        assert not out and err.count("\n") == 1 and "layout is needed" in err


def test_pairs_turning_within_the_context_match_the_formula() -> None:
    text = describe(LLAMA, length=20000)
    d, b = 128, 500000.0
    waves = [2 * math.pi * b ** (2 * i / d) for i in range(d // 2)]
    assert f"within the declared context: {sum(w <= 8192 for w in waves)} of 64" in text
    assert f"within the --length context: {sum(w <= 20000 for w in waves)} of 64" in text
    assert f"one turn per {max(waves):,.0f} positions" in text


def test_what_acts_outside_the_rotation_is_said() -> None:
    scout = json.loads(next(p for p in ZOO if "scout" in p.stem).read_text())
    text = describe(scout, length=1_000_000)
    assert "full_attention (12 layers): does not rotate (NoPE)" in text
    expected = 0.1 * math.log1p((999_999 + 1) // 8192) + 1  # Llama 4's tuning, at position 999999
    assert f"at position 999,999: x{expected:.4f}" in text
    ministral = json.loads(next(p for p in ZOO if "ministral" in p.stem).read_text())
    assert "llama_4_scaling_beta" in describe(ministral)


def test_warnings() -> None:
    qwen = json.loads(next(p for p in ZOO if p.stem == "qwen3-1.7b-yarn").read_text())
    assert "static YaRN" in describe(qwen)
    small = {**LLAMA, "rope_theta": 100.0, "max_position_embeddings": 32768}  # slowest turn: 2*pi*100^(126/128)
    assert "the base 100 is too small for 32,768 positions" in describe(small)
    assert "too small" not in describe(LLAMA)
    deepseek = json.loads(next(p for p in ZOO if p.stem == "deepseek-v3").read_text())
    assert "no 'rope_interleave'" in describe(deepseek)
    assert "no 'rope_interleave'" not in describe({**deepseek, "rope_interleave": True})


def test_the_base_check_stops_at_the_context_and_spares_p_rope() -> None:
    """A window longer than the context bounds nothing: Qwen2-7B's published window (131,072) with
    its window on and base 10,000 (slowest turn 2*pi*10000^(126/128), about 54,410 positions) is
    not too small for its declared 32,768, nor for the window. p-RoPE (Gemma 4's global layers: 64
    of 256 pairs turn, the slowest every 2*pi*1e6^(126/512), about 188) keeps its slow pairs still
    on purpose and gets no warning; a plain layer as fast does."""
    qwen2 = json.loads(next(p for p in ZOO if p.stem == "qwen2-7b-instruct").read_text())
    windowed = {**qwen2, "use_sliding_window": True, "max_window_layers": 21, "rope_theta": 10000.0}
    assert "too small" not in describe(windowed)
    assert "the base 10000 is too small for 60,000" in describe(windowed, length=60000)
    slowest = 2 * math.pi * 1e6 ** (126 / 512)
    gemma4 = {"model_type": "gemma4_text", "layer_types": ["full_attention"], "head_dim": 256, "global_head_dim": 512,
              "hidden_size": 1024, "num_attention_heads": 4, "max_position_embeddings": 131072,
              "rope_parameters": {"full_attention": {"rope_type": "proportional", "rope_theta": 1e6,
                                                     "partial_rotary_factor": 0.25}}}
    from posenc.configs import read_config
    from posenc.inspect import _wavelengths

    layer = read_config(gemma4).layers["full_attention"]  # the warning's condition holds: 188 < 131,072
    assert layer.scaling == {"type": "proportional", "partial_rotary_factor": 0.25}
    assert max(_wavelengths(layer, None)) == pytest.approx(slowest)
    assert "too small" not in describe(gemma4)
    fast = {**LLAMA, "rope_theta": 1e6 ** 0.25, "max_position_embeddings": 131072}  # about as fast: 2*pi*31.6^(126/128)
    assert 2 * math.pi * (1e6 ** 0.25) ** (126 / 128) < 2 * slowest
    assert "too small for 131,072 positions" in describe(fast)


def test_a_length_dependent_rule_is_judged_at_the_length_judged() -> None:
    """Phi-4-mini's LongRoPE (review5 X3): its short factors' slowest pair (about 51,862 positions) turns
    within its declared 131,072, but past its original 4,096 tokens the long factors apply, whose slowest
    pair turns every 2,477,432 (transformers' own longrope rule at that length gives the same): no base
    warning, and the slowest-pair line says which length it is for. A LongRoPE base too small even with
    the long factors is still warned about."""
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from posenc.configs import read_config
    from posenc.inspect import _wavelengths

    phi = json.loads(next(p for p in ZOO if p.stem == "phi-4-mini-instruct").read_text())
    layer = read_config(phi).layers["full_attention"]
    assert max(_wavelengths(layer, None)) < 131072 < max(_wavelengths(layer, 131072))
    live = transformers.AutoConfig.for_model(**json.loads(json.dumps(phi)))  # it rewrites rope_scaling in place
    inv_freq, _ = ROPE_INIT_FUNCTIONS["longrope"](live, "cpu", seq_len=131072)
    theirs = max(2 * math.pi / f for f in inv_freq.tolist() if f > 0)
    assert max(_wavelengths(layer, 131072)) == pytest.approx(theirs, rel=1e-6)
    text = describe(phi)
    assert "too small" not in text and "slowest pair for inputs up to 4,096 tokens: one turn per 51,862" in text
    assert "slowest pair at a length of 131,072: one turn per 2,477,432" in describe(phi, length=131072)
    assert "the base 100 is too small for 131,072 positions" in describe({**phi, "rope_theta": 100.0})


def _run(tmp_path: Path, content: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "config.json"
    path.write_text(content)
    done = subprocess.run([sys.executable, "-m", "posenc.inspect", str(path), *args], capture_output=True,
                          text=True, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("content", "args", "named"),
    [
        ("{not json", (), "not JSON"),                                               # not JSON
        ("[1, 2, 3]", (), "must hold a JSON object"),                                # not a dict
        (json.dumps({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "fator": 3}}), (),
         "unknown key 'fator'"),                                                     # an unknown key
        (json.dumps({**LLAMA, "rope_theta": -5.0}), (), "rope_theta must be > 0"),   # an impossible value
        (json.dumps({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 0.5}}), (), "factor'] must be >= 1"),
        (json.dumps(LLAMA), ("--layer-type", "sliding"), "layer_type must be one of 'full_attention'"),
        (json.dumps(LLAMA), ("--length", "0"), "length must be an integer >= 1"),
        (json.dumps(LLAMA), ("--length", "many"), "argument --length: invalid int value"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, content: str, args: tuple[str, ...], named: str) -> None:
    code, out, err = _run(tmp_path, content, *args)
    assert code == 2 and not out
    assert err.count("\n") == 1 and named in err and "Traceback" not in err, err


def test_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing.json")]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and "No such file" in err


def test_a_good_run_from_the_shell(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, json.dumps(LLAMA), "--length", "4096")
    assert code == 0 and not err and "rotates 128 of 128 features in half pairs, base 500000" in out


def test_standard_input_and_engine_names() -> None:
    """``-`` reads the config from standard input; ``--engines`` names the layout as each engine does
    (read at each engine's source: posenc.engines.layout_flags), leaving out engines without it."""
    gptj = {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28, "rotary_dim": 64}
    done = subprocess.run([sys.executable, "-m", "posenc.inspect", "-", "--engines"], input=json.dumps(gptj),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and not done.stderr
    engines = done.stdout.split("layout names in engines:\n")[1].splitlines()
    assert engines == ["- interleaved: llama.cpp (ggml) LLAMA_ROPE_TYPE_NORM (ggml mode 0); MLX (mlx-lm) "
                       "traditional=True; vLLM is_neox_style=False; SGLang is_neox_style=False; torchtune "
                       "RotaryPositionalEmbeddings; Meta llama-models apply_rotary_emb (view_as_complex)"]
    assert "Keras Hub" not in engines[0]  # it has no interleaved layout
    assert "layout names" not in describe(LLAMA)  # only when asked
    assert "- half: llama.cpp (ggml) LLAMA_ROPE_TYPE_NEOX" in describe(LLAMA, engines=True)
    bad = subprocess.run([sys.executable, "-m", "posenc.inspect", "-"], input="[1,", capture_output=True, text=True,
                         timeout=120, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "-: not JSON" in bad.stderr
    with pytest.raises(TypeError, match="engines must be True or False"):
        describe(LLAMA, engines="yes")  # type: ignore[arg-type]


def test_a_model_wide_window_is_described() -> None:
    mistral = {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
               "sliding_window": 4096, "rope_theta": 10000.0, "max_position_embeddings": 32768}
    text = describe(mistral)
    assert "full_attention (32 layers): " in text and "attends within 4,096 tokens" in text
    assert "limits every attention layer" in text


def test_console_script_is_the_command_line() -> None:
    """``posenc-inspect`` (pyproject's [project.scripts]) is `main`, the function ``python -m posenc.inspect`` runs."""
    import importlib
    import tomllib

    target = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = target["posenc-inspect"].partition(":")
    assert getattr(importlib.import_module(module), name) is main


def test_static_yarn_advice_is_only_qwens() -> None:
    """review5 X2: every YaRN config is told the fact (stretched at every length); only Qwen's model
    types get the advice to add the scaling only for long inputs (Qwen's guide), not DeepSeek-V3 or
    gpt-oss, whose authors' code runs YaRN at every length too."""
    def yarn_warning(name: str) -> str:
        text = describe(json.loads(next(p for p in ZOO if p.stem == name).read_text()))
        [line] = [line for line in text.splitlines() if line.startswith("- static YaRN")]
        return line

    for name in ("qwen3-1.7b-yarn", "qwen2.5-7b-instruct-yarn"):
        assert yarn_warning(name).endswith("Qwen's guide advises adding this rope_scaling only when long inputs need it")
    for name in ("deepseek-v3", "gpt-oss-120b", "ministral-3-3b-2512"):
        assert yarn_warning(name) == ("- static YaRN: the frequencies are stretched at every length, short inputs "
                                      "included (transformers computes them once, from the config)")


def test_layers_that_see_both_ways_say_so() -> None:
    """A layer with no window that sees every token before and after (window_sides 'both': an encoder's
    full layers, or a config's is_causal false) says so; a causal one says nothing of a window."""
    small = {"hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 3}
    both = ", attends to every token, before and after"
    assert f"full_attention (1 layers): rotates 32 of 32 features in half pairs, base 160000, no scaling{both}" in \
        describe({**small, "model_type": "modernbert"})
    assert both in describe({**small, "model_type": "llama", "is_causal": False})
    assert both not in describe({**small, "model_type": "llama"})


def test_the_length_a_rule_reaches_is_compared_too() -> None:
    """review5 X6: Qwen2.5-7B's YaRN file declares 32,768 and stretches 4 x 32,768 = 131,072; the
    reading compares the slowest pair with that length too (the models table's context column), and
    counts the pairs that turn within it. Where the declared context is the rule's (Qwen3's file,
    131,072 = 4 x 32,768), nothing is added."""
    qwen25 = json.loads(next(p for p in ZOO if p.stem == "qwen2.5-7b-instruct-yarn").read_text())
    text = describe(qwen25)
    assert "155x the rule's 131,072)" in text and "pairs completing a turn within the rule's context: 40 of 64" in text
    assert "rule's" not in describe(json.loads(next(p for p in ZOO if p.stem == "qwen3-1.7b-yarn").read_text()))
