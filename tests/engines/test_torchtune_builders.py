"""torchtune's model builders against posenc's reading of the same published configs.

torchtune reads no ``config.json``: each model builder (``llama3_1_8b()``, ``qwen2_5_3b()``, ...) passes
fixed arguments to a component builder, which builds the RoPE module. The builders cannot be
imported here (torchtune's package ``__init__`` requires torchao), so the test reads each builder's
arguments from the installed source with ``ast`` (literal keyword arguments of its ``return
component(...)`` call; an argument it leaves out takes the component builder's default), finds which
RoPE class the component builder constructs, builds that class from its file (as test_torchtune.py
does) with those arguments, and compares its frequencies with `read_config` of the zoo's config.

What it shows: Llama 3.1 and 3.2, Qwen2, Qwen2.5, Gemma 2 and Mistral 7B agree (to float32
rounding of the frequencies). Qwen2.5-7B-Instruct's long-context YaRN block is not expressible in a
builder: torchtune rotates it as plain RoPE. Phi-4 disagrees: ``phi4_14b`` calls the Phi-3 component
builder without ``rope_base``, whose default is 10,000, where Phi-4's config has ``rope_theta``
250,000. torchtune pairs features interleaved for Llama, Gemma 2 and Mistral (``RotaryPositionalEmbeddings``,
``Llama3ScaledRoPE``) and permutes the Hugging Face q and k weights on conversion
(``convert_weights.hf_to_tune``, run below), so the scores equal the half layout's.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
from importlib.resources import files
from pathlib import Path

import pytest
import torch

from posenc import apply_rope, read_config
from posenc.rope_scaling import rope_inverse_frequencies

_SPEC = importlib.util.find_spec("torchtune")
if _SPEC is None or not _SPEC.submodule_search_locations:
    pytest.skip("torchtune is not installed: make install installs it (tools/engines-nodeps.txt)",
                allow_module_level=True)
ROOT = Path(next(iter(_SPEC.submodule_search_locations)))

# RoPE class -> (its file, the layout it pairs)
ROPE_CLASSES = {
    "RotaryPositionalEmbeddings": ("modules/position_embeddings.py", "interleaved"),
    "Llama3ScaledRoPE": ("models/llama3_1/_position_embeddings.py", "interleaved"),
    "Qwen2RotaryPositionalEmbeddings": ("models/qwen2/_positional_embeddings.py", "half"),
    "Phi3RotaryPositionalEmbeddings": ("models/phi3/_position_embeddings.py", "half"),
}
# zoo config -> (torchtune family, model builder, how torchtune's frequencies compare with the reading)
CASES = {
    "llama-3.1-8b": ("llama3_1", "llama3_1_8b", "same"),
    "llama-3.2-1b": ("llama3_2", "llama3_2_1b", "same"),
    "llama-3.2-3b": ("llama3_2", "llama3_2_3b", "same"),
    "qwen2-7b-instruct": ("qwen2", "qwen2_7b", "same"),
    "qwen2.5-3b-instruct": ("qwen2_5", "qwen2_5_3b", "same"),
    "qwen2.5-7b-instruct-yarn": ("qwen2_5", "qwen2_5_7b_instruct", "no yarn"),
    "gemma-2-2b": ("gemma2", "gemma2_2b", "same"),
    "gemma-2-9b": ("gemma2", "gemma2_9b", "same"),
    "mistral-7b-v0.1": ("mistral", "mistral_7b", "same"),
    "phi-4": ("phi4", "phi4_14b", "base 10000"),
}


@functools.cache
def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _literals(pairs) -> dict[str, object]:
    """The pairs (name, expression) whose expression is a literal, evaluated (names and calls left out)."""
    found = {}
    for name, node in pairs:
        try:
            found[name] = ast.literal_eval(node)
        except ValueError:
            continue
    return found


def _defaults(function: ast.FunctionDef) -> dict[str, object]:
    args = function.args.args + function.args.kwonlyargs
    values = [None] * (len(function.args.args) - len(function.args.defaults)) + function.args.defaults
    values += function.args.kw_defaults
    return _literals((a.arg, v) for a, v in zip(args, values) if v is not None)


def builder_arguments(family: str, builder: str) -> tuple[dict[str, object], str, str]:
    """The keyword arguments the component builder receives (defaults filled in), its name, and the
    RoPE class it constructs."""
    models = ROOT / "models"
    call = next(node.value for node in ast.walk(_functions(models / family / "_model_builders.py")[builder])
                if isinstance(node, ast.Return))
    component = call.func.id
    given = _literals((k.arg, k.value) for k in call.keywords)
    home = next(path for path in sorted(models.glob("*/_component_builders.py")) if component in _functions(path))
    function = _functions(home)[component]
    classes = {node.func.id for node in ast.walk(function) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id in ROPE_CLASSES}
    assert len(classes) == 1, (builder, classes)
    return {**_defaults(function), **given}, component, classes.pop()


@functools.cache
def load(relative: str):
    spec = importlib.util.spec_from_file_location(f"_torchtune_{Path(relative).stem}", ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def zoo(name: str) -> dict:
    entry = json.loads(files("posenc").joinpath(f"zoo/{name}.json").read_text())
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def torchtune_rope(family: str, builder: str):
    args, _, cls = builder_arguments(family, builder)
    dim = args.get("head_dim") or args["embed_dim"] // args["num_heads"]
    kwargs = {"dim": dim, "max_seq_len": 16, "base": args["rope_base"]}
    if cls == "Llama3ScaledRoPE":
        kwargs["scale_factor"] = args["scale_factor"]
    return getattr(load(ROPE_CLASSES[cls][0]), cls)(**kwargs), ROPE_CLASSES[cls][1], args


@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_reads_the_config(name: str) -> None:
    family, builder, expect = CASES[name]
    rope, layout, args = torchtune_rope(family, builder)
    config = zoo(name)
    layers = [layer for layer in read_config(config).layers.values() if layer.rotates]
    assert rope.dim == layers[0].dim and all(layer.rotary_dim == layer.dim for layer in layers)
    theirs = rope.theta.double()
    for layer in layers:  # Gemma 2: sliding and full layers, one base
        ours = rope_inverse_frequencies(layer.dim, base=layer.base, scaling=layer.scaling)
        plain = rope_inverse_frequencies(layer.dim, base=layer.base)
        if expect == "same":
            torch.testing.assert_close(theirs, ours, rtol=2e-6, atol=0)
        elif expect == "no yarn":  # the builder rotates the config without its rope_scaling block
            torch.testing.assert_close(theirs, plain, rtol=2e-6, atol=0)
            assert layer.scaling["type"] == "yarn" and (theirs / ours).max() > 3.9  # 4x the low frequencies
        else:  # "base 10000": the Phi-3 component builder's default, not Phi-4's rope_theta
            assert args["rope_base"] == 10_000 and config["rope_theta"] == 250_000 == layer.base
            torch.testing.assert_close(theirs, rope_inverse_frequencies(layer.dim, base=10_000.0), rtol=2e-6, atol=0)
            assert (ours / theirs).min() < 0.05  # the slowest pairs turn 20x slower in transformers
    assert layout == ("half" if family in ("qwen2", "qwen2_5", "phi4") else "interleaved")


def test_the_weight_converter_makes_interleaved_equal_half() -> None:
    """hf_to_tune permutes each head's q and k rows so that torchtune's interleaved rotation gives the
    scores the half rotation gives to the Hugging Face weights."""
    convert = load("models/convert_weights.py")
    heads, head_dim, width = 2, 8, 16
    generator = torch.Generator().manual_seed(0)
    weights = {name: torch.randn(heads * head_dim, width, generator=generator, dtype=torch.float64)
               for name in ("model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight")}
    tune = convert.hf_to_tune(weights, num_heads=heads, num_kv_heads=heads, dim=width, head_dim=head_dim)
    x = torch.randn(5, width, generator=generator, dtype=torch.float64)
    positions = torch.arange(5) * 1000

    def scores(q_w, k_w, layout):
        q = apply_rope((x @ q_w.T).view(5, heads, head_dim).transpose(0, 1), positions, layout=layout)
        k = apply_rope((x @ k_w.T).view(5, heads, head_dim).transpose(0, 1), positions, layout=layout)
        return q @ k.transpose(-1, -2)

    hf = scores(*weights.values(), "half")
    tuned = scores(tune["layers.0.attn.q_proj.weight"], tune["layers.0.attn.k_proj.weight"], "interleaved")
    torch.testing.assert_close(tuned, hf, rtol=1e-12, atol=1e-9)
    assert not torch.allclose(scores(*weights.values(), "interleaved"), hf)  # unpermuted: other scores
