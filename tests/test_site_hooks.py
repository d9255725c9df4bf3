"""The site hooks that decide what a page downloads and how figures and tables are served
(hooks/posenc_site.py, hooks/site_weight.py, hooks/result_tables.py)."""

from __future__ import annotations

import doctest
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

import site_weight  # noqa: E402


def test_hook_docstring_examples() -> None:
    import posenc_site

    for module in (site_weight, posenc_site):
        failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert attempted > 0 and failed == 0, module.__name__


def test_search_index_keeps_prose_and_typed_code_only(tmp_path: Path) -> None:
    index = tmp_path / "search_index.json"
    docs = [
        {"location": "rope/#x", "title": "Rotation¶",
         "text": "<p>apply_rope turns pairs</p><pre><code>&gt;&gt;&gt; apply_rope(x)\ntensor([[1.0]])\n</code></pre>"
                 "<pre><code>def rotate(x):\n    return -x\n</code></pre>"},
        {"location": "api/rope/#posenc.rope.apply_rope", "title": "apply_rope",
         "text": "<pre><code>apply_rope(\n    x: Tensor,\n) -&gt; Tensor\n</code></pre><p>Rotate.</p>"},
    ]
    index.write_text(json.dumps({"config": {}, "docs": docs}))
    before, after = site_weight.prune_search_index(index)
    pruned = json.loads(index.read_text())["docs"]
    assert after < before
    assert pruned[0]["title"] == "Rotation"
    assert "apply_rope turns pairs" in pruned[0]["text"] and "&gt;&gt;&gt; apply_rope(x)" in pruned[0]["text"]
    assert "tensor([[1.0]])" not in pruned[0]["text"]  # printed output: not searched
    assert "def rotate(x):" in pruned[0]["text"] and "return -x" not in pruned[0]["text"]
    assert pruned[1]["text"] == docs[1]["text"]  # an API signature stays whole


def test_math_assets_stay_where_notebook_cells_have_math() -> None:
    notebook = '<div class="jp-RenderedMarkdown"><p>a rotation by $m\\theta$</p></div>'
    assert site_weight.has_math(notebook)
    assert not site_weight.has_math('<div class="jp-RenderedMarkdown"><p>plain</p></div><pre>cost = "$5"</pre>')


@pytest.mark.skipif(shutil.which("node") is None or not (ROOT / "node_modules" / "d3-scale").is_dir(),
                    reason="needs node and node_modules (npm ci, done by make install)")
def test_chart_library_defines_every_d3_name_the_widgets_use(tmp_path: Path) -> None:
    """The site serves only some D3 modules: each ``d3.NAME`` in the widgets must be among them."""
    import posenc_site

    scripts = "".join(path.read_text() for path in sorted((ROOT / "docs/javascripts/explorer").glob("*.js")))
    used = sorted(set(re.findall(r"\bd3\.([A-Za-z]\w*)", scripts)))
    assert len(used) > 10
    library = tmp_path / "d3.js"
    library.write_text(posenc_site.chart_library())
    # run as a browser would (no module system: the UMD builds extend the global d3)
    script = (f"const vm = require('vm'); const code = require('fs').readFileSync({json.dumps(str(library))}, 'utf8');"
              "const sandbox = {}; vm.runInNewContext(code, sandbox);"
              f"const names = {json.dumps(used)};"
              "console.log(JSON.stringify(names.filter((n) => typeof sandbox.d3[n] !== 'function')));")
    result = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []
