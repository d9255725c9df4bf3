"""`python -m posenc.experiments ... --methods`: a subset of a configuration's methods, said in the results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posenc.experiments import inside
from posenc.experiments.__main__ import main


def test_a_subset_of_methods_runs_and_its_results_say_so(tmp_path: Path) -> None:
    output = tmp_path / "inside.json"
    assert main(["inside-lm", "--config", "tiny", "--output", str(output), "--workers", "1", "--no-progress",
                 "--methods", "pope", "fox", "pope"]) == 0
    results = json.loads(output.read_text())
    assert results["config"]["methods"] == ["pope", "fox"]  # in the order given, once each
    assert list(results["methods"]) == ["pope", "fox"]
    full = inside.CONFIGS["tiny"].as_dict()
    assert {k: v for k, v in results["config"].items() if k != "methods"} == \
        {k: v for k, v in full.items() if k != "methods"}


def test_a_method_outside_the_configuration_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["inside-lm", "--config", "tiny", "--methods", "fox", "rope"])
    assert "--methods rope: not a method of the 'tiny' configuration of inside-lm" in capsys.readouterr().err
