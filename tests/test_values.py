"""The value macros and claim checks (posenc.experiments.claims, hooks/values.py), against numbers
read from the results files here, independently, and on results changed so that a claim fails."""

from __future__ import annotations

import copy
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from values import expand_values

from posenc.experiments import _references
from posenc.experiments.claims import ClaimError, check, checks, measure, value

RESULTS = Path(__file__).resolve().parents[1] / "posenc" / "experiments" / "results"


def raw(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text())
    return data


def test_measures_are_the_seeds_of_the_results_file() -> None:
    lm = raw("length_extrapolation.json")
    runs = lm["methods"]["fire"]["runs"]
    at_8l = [run["perplexity"][3] for run in runs]  # eval lengths 64, 128, 256, 512
    fire = measure("lm.fire@8L")
    assert fire.seeds == tuple(at_8l) and fire.low == min(at_8l) and fire.high == max(at_8l)
    assert fire.mean == pytest.approx(statistics.mean(at_8l), abs=1e-4)
    ratios = [run["perplexity"][3] / run["perplexity"][0] for run in runs]
    assert value("lm.fire@8L / @L", "range .3f") == f"{min(ratios):.3f} to {max(ratios):.3f}"
    assert value("lm.fire@8L / lm.fire@L", "max .4f") == f"{max(ratios):.4f}"
    means = lm["methods"]["fire"]["perplexity"]  # stored rounded to 4 decimals
    assert float(value("mean(lm.fire@8L) / mean(lm.fire@L)", ".6f")) == pytest.approx(means[3] / means[0], abs=1e-4)
    assert value("lm:config.steps", ",d") == f"{lm['config']['steps']:,d}"
    stretch = [sum(run["position_loss"][4:6]) / 2 for run in runs]  # positions 64-95, buckets of 16
    assert measure("lm.fire@p64-95").seeds == pytest.approx(stretch)


def test_retrieval_extension_windows_and_vit_references() -> None:
    recall = raw("retrieval.json")["methods"]["alibi"]["runs"]
    learned = [run["accuracy"][3] for run in recall if run["accuracy"][0] >= 0.9]
    assert measure("recall.alibi.learned@8L").seeds == tuple(learned) and len(learned) == 2
    ext = raw("context_extension.json")["tasks"]["retrieval"]["runs"]
    assert measure("ext.recall.yarn.tuned@4L").seeds == tuple(run["fine_tuned"]["yarn"][1] for run in ext)
    assert measure("ext.recall.none@L").seeds == tuple(run["at_train_length"] for run in ext)
    windows = raw("inference_windows.json")
    rope = windows["methods"]["rope"]["window 64"]
    window = measure("windows.rope.window@8L")
    assert (window.mean, window.low, window.high, window.seeds) == \
        (rope["perplexity"][0], rope["perplexity_min"][0], rope["perplexity_max"][0], None)
    detail = {row["label"]: row for row in windows["settings"]}
    assert measure("windows.detail.sinks-in-cache@block2").mean == \
        detail["4 sinks + window 60, in-cache positions"]["loss_by_block"][2]
    vit = raw("vit_resolution.json")["methods"]["learned"]["accuracy"]
    assert measure("vit.learned@6x6").seeds == tuple(vit[1])
    assert value("posenc: alibi_slopes(4)[-1] * 511", ".4f") == f"{511 / 256:.4f}"
    assert value("max(lm.*@8L)", ".4f") == \
        f"{max(v for m in raw('length_extrapolation.json')['methods'].values() for v in m['perplexity_max'][3:] if v):.4f}"


@pytest.mark.parametrize(("text", "message"), [
    ("lm.nothing@8L", "no 'nothing'"),
    ("lm.rope@3L", "not scored at 3L"),
    ("lm.learned@8L", "not scored there"),
    ("lm.rope@p60-70", "blocks of 16"),
    ("windows.rope.half@8L", "the settings are"),
    ("recall.rope.learned@8L + lm:config.nothing", "no 'nothing'"),
    ("posenc: __import__('os')", "is not allowed"),
    ("posenc: open('x')", "not in posenc.__all__"),
    ("posenc: alibi_slopes(4).__class__", "is not allowed"),
    ("@8L", "repeats no reference"),
])
def test_bad_references_name_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ClaimError, match=message.replace("(", r"\(")):
        value(text, ".2f")


def test_formats() -> None:
    assert value("lm:methods.none.parameters", "sig:3") == "113,000"
    assert value("lm:methods.none.parameters", ",d") == "112,768"
    assert value("recall:chance", ".2%") == "6.25%"
    with pytest.raises(ClaimError, match="format"):
        value("lm.rope@L", "median .2f")
    with pytest.raises(ClaimError, match="no range over seeds"):
        value("windows.rope.window@8L / windows.rope.full@8L", "range .2f")  # means only


def test_claims_on_the_committed_results() -> None:
    check("lower(lm.kerple@8L, lm.alibi@8L, lm.rope@8L)")
    check("highest(lm.none@L, lm.rope@L, lm.cope@L)")
    check("tied(lm.fire@L, lm.kerple@L, lm.xpos@L)")
    check("count_at_least(recall.rope@L, 0.9, 3)")
    check("same(ext.lm.dynamic@4L, ext.lm.ntk@4L)")
    assert checks("below(lm.kerple@8L / @L, 1); within(lm.alibi@8L / @L, 0.9, 1.1);") == 2
    for wrong in ("lower(lm.rope@8L, lm.kerple@8L)", "tied(lm.cope@L, lm.rope@L)", "lowest(lm.cope@L, lm.fire@L)",
                  "count_at_least(recall.rope@L, 0.9, 2)", "above(lm.alibi@8L / @L, 1)", "mean_lower(lm.rope@L, lm.cope@L)",
                  "same(ext.lm.yarn@4L, ext.lm.ntk@4L)", "within(lm.kerple@8L / @L, 1, 2)"):
        with pytest.raises(ClaimError):
            check(wrong)
    with pytest.raises(ClaimError, match="cannot read the claim"):
        check("best(lm.rope@8L)")
    with pytest.raises(ClaimError, match="takes 3 arguments"):
        check("within(lm.rope@8L, 1)")


def test_a_claim_fails_when_the_data_stop_supporting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's guarantee: change the results so that KERPLE breaks at 8L, and the claims the
    extrapolation chapter makes about it fail."""
    original = _references._results

    def changed(study: str, large: bool) -> dict[str, Any]:
        data = copy.deepcopy(original(study, large))
        if study == "lm" and not large:
            for run in data["methods"]["kerple"]["runs"]:
                run["perplexity"][3] *= 5
        return data

    check("below(lm.kerple@8L / @L, 1)")
    monkeypatch.setattr(_references, "_results", changed)
    with pytest.raises(ClaimError, match="not all below 1"):
        check("below(lm.kerple@8L / @L, 1)")
    page = (Path(__file__).resolve().parents[1] / "docs" / "extrapolation.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="extrapolation.md: a claim check fails"):
        expand_values(page, "extrapolation.md")


def test_the_hook_renders_values_and_removes_checks() -> None:
    text = ("A [[value lm.rope@8L | .2f]] B\n  <!-- check: lower(lm.kerple@8L, lm.rope@8L);\n"
            "       tied(lm.fire@L, lm.kerple@L) -->\nC <!-- check: below(lm.kerple@8L / @L, 1) --> D\n")
    expected = f"A {raw('length_extrapolation.json')['methods']['rope']['perplexity'][3]:.2f} B\nC  D\n"
    assert expand_values(text, "page.md") == expected
    with pytest.raises(ValueError, match=r"page.md: \[\[value lm.nothing@8L \| .2f\]\]"):
        expand_values("[[value lm.nothing@8L | .2f]]", "page.md")
    assert expand_values("<!-- an ordinary comment -->", "page.md") == "<!-- an ordinary comment -->"


def test_the_readme_examples_render() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Numbers and claims from results")[1].split("\n## ")[0]
    blocks = [block.split("\n", 1)[1] for block in section.split("```markdown")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        out = expand_values(block.split("```")[0], "README.md")
        assert "[[" not in out and "check:" not in out
