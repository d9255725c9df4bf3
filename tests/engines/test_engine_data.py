"""posenc.engines, the data the chapter and the inspector read, points at tests that exist.

Every support cell that says an engine agrees ("yes", "half only", ...) or differs, and every
disagreement checked by running, names the test in ``tests/engines/`` that runs it: the named test
function must exist, so the table cannot claim a check that was renamed away or never written.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from posenc.engines import (
    DISAGREEMENTS,
    ENGINES,
    FEATURES,
    SUPPORT,
    known_disagreements,
    layout_flags,
    support_table,
)

HERE = Path(__file__).parent
RUN = {"same", "differs", "half", "interleaved"}  # statuses established by running a test


def _tests_in(file: str) -> set[str]:
    tree = ast.parse((HERE / file).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def _exists(reference: str) -> bool:
    file, _, name = reference.removeprefix("tests/engines/").partition("::")
    return (HERE / file).is_file() and name in _tests_in(file)


def test_every_run_cell_names_an_existing_test():
    missing = [(key, ref) for key, (status, ref) in SUPPORT.items() if status in RUN and not _exists(ref)]
    assert not missing, missing


def test_every_disagreement_is_shown_by_an_existing_test():
    for d in DISAGREEMENTS:
        assert d.engine in ENGINES and d.feature in FEATURES, d
        assert d.test is not None and _exists(d.test), d
        assert SUPPORT[(d.engine, d.feature)][0] == "differs", d


def test_cells_name_known_engines_and_features():
    assert all(engine in ENGINES and feature in FEATURES for engine, feature in SUPPORT)


def test_support_table_shape():
    header, rows = support_table()
    assert header[1:] == [engine.name for engine in ENGINES.values()]
    assert [row[0] for row in rows] == list(FEATURES.values())
    assert all(len(row) == len(header) for row in rows)


@pytest.mark.parametrize(("call", "arg"), [(layout_flags, "neox"), (known_disagreements, "rope")])
def test_bad_names_are_refused_by_name(call, arg):
    with pytest.raises(ValueError, match="must be one of"):
        call(arg)
