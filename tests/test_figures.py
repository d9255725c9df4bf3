"""Every registered figure renders, in both palettes, deterministically, with alt text."""

from __future__ import annotations

from pathlib import Path

import pytest

from posenc.figures import load_all
from posenc.figures._render import VARIANTS, cache_key, dependencies, render

FIGURES = load_all()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_renders_in_both_palettes_deterministically(name: str, tmp_path: Path) -> None:
    spec = FIGURES[name]
    outputs = {}
    for variant in (*VARIANTS, "light"):  # light twice: two draws must give the same bytes
        target = tmp_path / f"{name}-{variant}-{len(outputs)}.{spec.extension}"
        render(name, variant, str(target))
        data = target.read_bytes()
        assert len(data) > 1000, f"{name} ({variant}) is suspiciously small"
        if spec.extension == "svg":
            text = data.decode()
            assert "<svg" in text and "<dc:date>" not in text
        outputs[f"{variant}-{len(outputs)}"] = data
    light, dark, light_again = outputs.values()
    assert light != dark, f"{name}: light and dark variants are identical"
    assert light == light_again, f"{name}: two draws of the same figure differ"


def test_alt_text_describes_the_figure() -> None:
    for spec in FIGURES.values():
        assert len(spec.alt.split()) >= 8, f"{spec.name}: alt text too short to describe the figure"


def test_cache_key_follows_dependencies() -> None:
    spec = FIGURES["attention-word-order"]
    deps = dependencies(spec.module)
    assert "posenc.attention" in deps and "posenc.sinusoidal" in deps and "posenc._checks" in deps
    assert "posenc.rope" not in deps
    assert cache_key(spec, "light") != cache_key(spec, "dark")
