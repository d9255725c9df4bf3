"""The site's search finds what readers type: the queries below, run through Material's own search
worker (its bundled lunr and its query handling, in node) on the index the build writes, land
on the section that explains the idea first.

Two kinds of test. The first run without a site: the separator of ``mkdocs.yml`` and
`search_text.clean_search_index` on small indexes made here. The others read the built index
(``$POSENC_SITE_DIR/search/search_index.json``, else ``site/``), so they run after
``mkdocs build``; without a built site they are skipped, and say so.
"""

from __future__ import annotations

import json
import os
import shutil
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

from search_text import BOOSTS, boost_for, clean_search_index, worker_with_token_set_fix  # noqa: E402

# Material's search worker, loaded into a node VM with the calls a browser worker makes: one
# SETUP message with the index, then one QUERY message per query. It prints, per query, every
# result's location and score (best first), and the queries the worker refused ("Invalid query").
HARNESS = r"""
const fs = require("fs"), vm = require("vm");
const [workerPath, indexPath] = process.argv.slice(2);
const queries = JSON.parse(fs.readFileSync(0, "utf8"));
let handler = null, reply = null, current = null;
const refused = [];
const warn = (...args) => { if (String(args[0]).startsWith("Invalid query")) refused.push(current); };
const context = {
  console: { log: console.log, warn, error: console.error }, setTimeout, clearTimeout, Map, Set, Uint16Array,
  addEventListener: (type, fn) => { if (type === "message") handler = fn; },
  postMessage: (message) => { reply = message; },
  importScripts: () => { throw new Error("the index asks for a language other than English"); },
};
context.self = context;
vm.createContext(context);
vm.runInContext(fs.readFileSync(workerPath, "utf8"), context);
const index = JSON.parse(fs.readFileSync(indexPath, "utf8"));
async function send(message) {
  reply = null;
  await handler({ data: message });
  for (let i = 0; i < 10000 && reply === null; i++) await new Promise((r) => setTimeout(r, 0));
  if (reply === null) throw new Error("the worker did not answer");
  return reply;
}
(async () => {
  await send({ type: 0, data: { config: index.config, docs: index.docs, options: { suggest: false } } });
  const results = {};
  for (const query of queries) {
    current = query;
    const answer = await send({ type: 2, data: query });
    // Material shows one group per page, pages in the order of their best entry, each group's
    // entries best first (the page's own entry, if it did not match, last with score 0)
    results[query] = answer.data.items.slice(0, 5).map((group) => group.map((item) => item.location));
  }
  process.stdout.write(JSON.stringify({ results, refused }));
})();
"""


def _package_worker() -> Path:
    import material

    found = sorted((Path(material.__file__).parent / "templates" / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    if not found:
        pytest.fail("mkdocs-material ships no search worker (templates/assets/javascripts/workers/search.*.min.js)")
    return found[0]


def _worker(tmp_path: Path) -> Path:
    """Material's worker as the site serves it: with lunr's token-set names made unambiguous
    (hooks/search_text.py worker_with_token_set_fix, applied by the build)."""
    fixed = tmp_path / "search-worker.js"
    fixed.write_text(worker_with_token_set_fix(_package_worker().read_text(encoding="utf-8")), encoding="utf-8")
    return fixed


def _separator() -> str:
    """The ``separator`` of the ``search`` plugin in ``mkdocs.yml``."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !ENV and python tags
    plugins = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["plugins"]
    entry = next(p["search"] for p in plugins if isinstance(p, dict) and "search" in p)
    return str(entry["separator"])


def search(index: dict[str, Any], queries: list[str], tmp_path: Path) -> tuple[dict[str, list[list[str]]], list[str]]:
    """Run ``queries`` through Material's worker on ``index``: per query the result groups as the
    search box lists them (one per page, each its entries' locations, best first) and the
    queries the worker refused."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the search worker is JavaScript (make install brings node's packages)")
    (tmp_path / "harness.js").write_text(HARNESS, encoding="utf-8")
    (tmp_path / "index.json").write_text(json.dumps(index), encoding="utf-8")
    run = subprocess.run([node, str(tmp_path / "harness.js"), str(_worker(tmp_path)), str(tmp_path / "index.json")],
                         input=json.dumps(queries), capture_output=True, text=True, timeout=600, check=True)
    answer = json.loads(run.stdout)
    return answer["results"], answer["refused"]


def first_section(groups: list[list[str]]) -> str | None:
    """What a reader meets first: the first page's best section, as the search box lists it under
    the page's title (the page itself where none of its sections matched)."""
    if not groups:
        return None
    page = next(location for location in groups[0] if "#" not in location)
    sections = [location for location in groups[0] if location != page]
    return sections[0] if sections else page


def first_page(groups: list[list[str]]) -> str | None:
    """The page of the first group."""
    return next(location for location in groups[0] if "#" not in location) if groups else None


def small_index(docs: list[dict[str, str]], separator: str) -> dict[str, Any]:
    return {"config": {"fields": {"tags": {"boost": 1e6}, "text": {"boost": 1.0}, "title": {"boost": 1e3}},
                       "lang": ["en"], "pipeline": ["stopWordFilter"], "separator": separator}, "docs": docs}


# ---------------------------------------------------------------------------------------------
# without a site


def test_the_separator_gives_the_words_readers_type(tmp_path: Path) -> None:
    """``sqrt(d_model)``, ``rope_theta`` in a config line and ``YaRN's`` are found with the site's
    separator; with Material's default (spaces and hyphens) the first two find nothing."""
    docs = [{"location": "a/", "title": "Scale", "text": "<p>multiplied by sqrt(d) before the sum</p>"},
            {"location": "b/", "title": "Config", "text": '<p><code>{"rope_theta": 500000.0}</code></p>'},
            {"location": "c/", "title": "Factor", "text": "<p>YaRN's attention factor and NTK-aware scaling</p>"},
            {"location": "d/", "title": "Other", "text": "<p>a text about something else</p>"}]
    queries = ["sqrt(d_model)", "rope_theta", "YaRN", "NTK-aware"]
    found, refused = search(small_index(docs, _separator()), queries, tmp_path)
    assert not refused
    assert [first_section(found[q]) for q in queries] == ["a/", "b/", "c/", "c/"]
    default, _ = search(small_index(docs, r"[\s\-]+"), queries, tmp_path)
    assert default["sqrt(d_model)"] == [] and default["rope_theta"] == []


def test_the_index_holds_prose_and_a_boost_per_page_role(tmp_path: Path) -> None:
    """`clean_search_index`: TeX as text with ``sqrt``, no code listings outside the API pages,
    glued table numbers gone, and the boost of each page's role."""
    path = tmp_path / "search_index.json"
    entries = [
        {"location": "adding-to-embeddings/#magnitude", "title": "Magnitude",
         "text": r"<p>scaled by \(\sqrt{d_{\text{model}}}\)</p><pre><code>&gt;&gt;&gt; Path(3)</code></pre>"},
        {"location": "api/rope/#posenc.rope.apply_rope", "title": "apply_rope",
         "text": "<pre><code>apply_rope(x, positions)</code></pre><p>Rotate.</p>"},
        {"location": "extrapolation/#table", "title": "Table", "text": "<p>rope 0.560.45–0.61 alibi</p>"},
    ]
    path.write_text(json.dumps({"config": {}, "docs": entries}), encoding="utf-8")
    assert clean_search_index(path) == 2  # two texts: the chapter's and the table's
    chapter, api, table = json.loads(path.read_text(encoding="utf-8"))["docs"]
    assert chapter["text"] == "<p>scaled by sqrt(d_model)</p>" and "boost" not in chapter
    assert api["text"].startswith("<pre><code>apply_rope") and api["boost"] == boost_for("api/") == 0.1
    assert table["text"] == "<p>rope   alibi</p>"
    assert all(0 < boost < 1 and reason for _, boost, reason in BOOSTS)


# ---------------------------------------------------------------------------------------------
# on the built index

SITE = Path(os.environ.get("POSENC_SITE_DIR", ROOT / "site"))
INDEX = SITE / "search" / "search_index.json"
built = pytest.mark.skipif(not INDEX.is_file(), reason=f"no built site at {SITE}: run `mkdocs build` first "
                                                        "(or set POSENC_SITE_DIR to a built site)")

# (query, the section that explains it): queries a reader types, names as the site writes them
FIRST_HITS: list[tuple[str, str | tuple[str, ...]]] = [
    ("Gemma 3", "architectures/#gemma-3"),
    ("sqrt(d_model)", "adding-to-embeddings/#magnitude-who-dominates-the-sum"),
    # a config key several sections read from a config, each saying what it is: any of them
    ("rope_theta", ("context-extension/#llama-31", "images-video/#reading-it-from-a-config",
                    "rope-today/#reading-a-models-config", "glossary/#base", "pitfalls/#rope-theta-moved")),
    ("NTK-aware", "context-extension/#ntk-aware-scaling"),
    ("YaRN", "context-extension/#yarn"),
    ("ALiBi slopes", "alibi/#the-slopes"),
    ("Llama 3.1", "context-extension/#llama-31"),
    ("Llama 4", "architectures/#llama-4"),
    ("left padding", "inference/#left-padding"),
    ("KV cache", "inference/#kv-cache"),
    ("position interpolation", "context-extension/#position-interpolation-linear"),
    ("dynamic NTK", "context-extension/#dynamic-ntk"),
    ("xPos", "beyond-alibi/#xpos-rope-with-a-decay"),
    ("M-RoPE", "positions-2d/#m-rope-text-and-images-in-one-position-space"),
    ("CoPE", "beyond-alibi/#cope-positions-that-count-what-matters"),
    ("PaTH", "inside-attention/#path-a-product-of-transforms-between-key-and-query"),
    ("FoX", "inside-attention/#fox-a-forget-gate-per-token"),
    ("stick-breaking", "inside-attention/#stick-breaking-the-nearest-key-takes-its-share-first"),
    ("PoPE", "inside-attention/#pope-magnitudes-from-content-angles-from-position"),
    ("sliding window", "inference/#windows-and-sinks"),
    ("RoPE", "rope/"),
    ("LongRoPE", "rope-today/#longrope"),
    ("Phi-3", "rope-today/#longrope"),  # its heading names the models that ship LongRoPE
    ("gpt-oss", "architectures/#gpt-oss"),
    ("ModernBERT", "architectures/#modernbert"),
    ("MiniMax", "architectures/#hybrids"),
    ("Qwen2.5-VL", "architectures/#video-time"),
    ("attention sink", "glossary/#attention-sink"),
    ("logit", "glossary/#logit"),
]


@pytest.fixture(scope="module")
def built_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[list[str]]], list[str]]:
    index = json.loads(INDEX.read_text(encoding="utf-8"))
    sweep = list(string.ascii_lowercase + string.digits)  # what the box holds after one key
    return search(index, [q for q, _ in FIRST_HITS] + sweep, tmp_path_factory.mktemp("search"))


@built
@pytest.mark.parametrize(("query", "section"), FIRST_HITS)
def test_a_query_finds_the_explaining_section_first(built_results: tuple[dict[str, list[list[str]]], list[str]],
                                                    query: str, section: str | tuple[str, ...]) -> None:
    found, _ = built_results
    allowed = (section,) if isinstance(section, str) else section
    first = first_section(found[query]) if "#" in allowed[0] else first_page(found[query])
    assert first in allowed, f"{query!r}: result groups {found[query][:3]}"


@built
def test_no_idea_lands_on_the_api_reference(built_results: tuple[dict[str, list[list[str]]], list[str]]) -> None:
    found, _ = built_results
    assert not [q for q, _ in FIRST_HITS if str(first_page(found[q])).startswith("api/")]


@built
def test_the_worker_answers_every_query(built_results: tuple[dict[str, list[list[str]]], list[str]]) -> None:
    """lunr's token set can fail on a query (Material then shows nothing): none of these may."""
    _, refused = built_results
    assert refused == []


@built
def test_the_built_index_is_the_cleaned_one() -> None:
    index = json.loads(INDEX.read_text(encoding="utf-8"))
    assert index["config"]["separator"] == _separator()
    assert not [d["location"] for d in index["docs"] if "<pre" in d["text"] and not d["location"].startswith("api/")]
    assert {d.get("boost", 1.0) for d in index["docs"] if d["location"].startswith("api/")} == {boost_for("api/")}


@built
def test_the_site_serves_the_worker_with_the_token_set_fix() -> None:
    """The built site's search worker is Material's with lunr's token-set names made unambiguous:
    the worker the sweep above runs (without the fix, queries such as '3' failed on this site)."""
    [served] = sorted((SITE / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert served.name == _package_worker().name
    expected = worker_with_token_set_fix(_package_worker().read_text(encoding="utf-8"))
    assert served.read_text(encoding="utf-8") == expected != _package_worker().read_text(encoding="utf-8")
