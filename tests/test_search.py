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

from search_text import (
    BOOSTS,
    WORKER_FIXES,
    boost_for,
    clean_search_index,
    patched_worker,
)

# Material's search worker, loaded into a node VM with the calls a browser worker makes: one
# SETUP message with the index, then one QUERY message per query. It prints, per query, the result
# groups (each result's location, best first), the words each result's link highlights (its ?h=),
# and the queries the worker refused ("Invalid query").
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
  const results = {}, highlights = {};
  for (const query of queries) {
    current = query;
    const answer = await send({ type: 2, data: query });
    // Material shows one group per page, pages in the order of their best entry, each group's
    // entries best first (the page's own entry, if it did not match, last with score 0)
    results[query] = answer.data.items.slice(0, 5).map((group) => group.map((item) => item.location));
    // the matched terms, as Material's link writes them into ?h= (search_result.tsx)
    highlights[query] = answer.data.items.slice(0, 5).map((group) => group.map(
      (item) => Object.entries(item.terms).filter(([, found]) => found).map(([term]) => term).join(" ")));
  }
  process.stdout.write(JSON.stringify({ results, highlights, refused }));
})();
"""


def _package_worker() -> Path:
    import material

    found = sorted((Path(material.__file__).parent / "templates" / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    if not found:
        pytest.fail("mkdocs-material ships no search worker (templates/assets/javascripts/workers/search.*.min.js)")
    return found[0]


def _worker(tmp_path: Path) -> Path:
    """Material's worker as the site serves it: with the edits of hooks/search_text.py WORKER_FIXES
    (lunr's token-set names, numbers in queries, pages' highlights), applied by the build."""
    fixed = tmp_path / "search-worker.js"
    fixed.write_text(patched_worker(_package_worker().read_text(encoding="utf-8")), encoding="utf-8")
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
    answer = search_answer(index, queries, tmp_path)
    return answer["results"], answer["refused"]


def search_answer(index: dict[str, Any], queries: list[str], tmp_path: Path) -> dict[str, Any]:
    """`search`'s answer whole: ``results``, ``highlights`` (per result, the words its link
    highlights, as the groups of ``results``) and ``refused``."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the search worker is JavaScript (make install brings node's packages)")
    (tmp_path / "harness.js").write_text(HARNESS, encoding="utf-8")
    (tmp_path / "index.json").write_text(json.dumps(index), encoding="utf-8")
    run = subprocess.run([node, str(tmp_path / "harness.js"), str(_worker(tmp_path)), str(tmp_path / "index.json")],
                         input=json.dumps(queries), capture_output=True, text=True, timeout=600, check=True)
    return dict(json.loads(run.stdout))


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


def test_a_number_in_a_query_names_the_thing_beside_it(tmp_path: Path) -> None:
    """The worker's edits (hooks/search_text.py WORKER_FIXES) on a small index: the sections holding
    both words of 'Gemma 3' rank above the titles that hold a '3.1', a '3.' or a lone '3', which
    Material's trailing wildcard still finds; a page listed for its sections alone highlights
    their words."""
    docs = [{"location": "llama/", "title": "Llama", "text": "<p>about the family</p>"},
            {"location": "llama/#llama-31", "title": "Llama 3.1", "text": "<p>its scaling rule</p>"},
            {"location": "steps/", "title": "Steps", "text": "<p>numbered steps</p>"},
            {"location": "steps/#3-sinusoids", "title": "3. Sinusoids", "text": "<p>many clocks</p>"},
            {"location": "steps/#attempt-3", "title": "Attempt 3: a sine", "text": "<p>one wave</p>"},
            {"location": "models/", "title": "Architectures", "text": "<p>families</p>"},
            {"location": "models/#gemma-3", "title": "Gemma 3: local and global", "text": "<p>Gemma 3 mixes</p>"},
            {"location": "today/", "title": "Today", "text": "<p>bases in use</p>"},
            {"location": "today/#bases", "title": "Bases", "text": "<p>Gemma 3 sets a larger base</p>"}]
    answer = search_answer(small_index(docs, _separator()), ["Gemma 3", "wave"], tmp_path)
    assert not answer["refused"]
    found = answer["results"]
    assert [group[0] for group in found["Gemma 3"][:2]] == ["models/#gemma-3", "today/#bases"]
    assert {group[0] for group in found["Gemma 3"][2:]} == {"llama/#llama-31", "steps/#3-sinusoids"}
    assert found["wave"] == [["steps/#attempt-3", "steps/"]] and answer["highlights"]["wave"] == [["wave", "wave"]]


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


# review5 S1: a number beside a name once found every word starting with that digit, and the titles
# holding one ("Llama 3.1", "3. Sinusoids", "positions 0 to 3") outranked the sections about the model
NUMBERED: list[tuple[str, str]] = [
    ("Gemma 3", "architectures/#gemma-3"),
    ("Mistral 3", "architectures/#mistral-3"),
    ("Llama 4", "architectures/#llama-4"),
    ("Phi-3", "rope-today/#longrope"),
    ("Llama 3", "context-extension/#llama-31"),  # "Llama 3.1": the number's wildcard is kept
]
# review5 S2: pages listed for their sections alone (architectures for YaRN; start, why-position for
# permutation equivariance) linked with an empty ?h=
HIGHLIGHTED = ["YaRN", "permutation equivariance"]


@pytest.fixture(scope="module")
def built_answer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    index = json.loads(INDEX.read_text(encoding="utf-8"))
    sweep = list(string.ascii_lowercase + string.digits)  # what the box holds after one key
    queries = [q for q, _ in FIRST_HITS] + [q for q, _ in NUMBERED] + HIGHLIGHTED + sweep
    return search_answer(index, list(dict.fromkeys(queries)), tmp_path_factory.mktemp("search"))


@pytest.fixture(scope="module")
def built_results(built_answer: dict[str, Any]) -> tuple[dict[str, list[list[str]]], list[str]]:
    return built_answer["results"], built_answer["refused"]


def _pages(groups: list[list[str]]) -> list[str]:
    return [next(location for location in group if "#" not in location) for group in groups]


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
@pytest.mark.parametrize(("query", "section"), NUMBERED)
def test_a_name_with_a_number_finds_the_model(built_answer: dict[str, Any], query: str, section: str) -> None:
    """The model's section first, and every page listed holds both words in its best section."""
    groups, marks = built_answer["results"][query], built_answer["highlights"][query]
    assert first_section(groups) == section, f"{query!r}: result groups {groups[:3]}"
    words = set(query.lower().replace("-", " ").split())
    assert len(groups) == 5 and [set(group[0].split()) for group in marks] == [words] * 5, list(zip(groups, marks))


@built
def test_gemma_3_lists_no_page_for_its_number_alone(built_answer: dict[str, Any]) -> None:
    """review5 S1's case: not the pages that a '3.1', a '3.' or a lone '3' in a heading brought up
    2nd to 5th."""
    pages = _pages(built_answer["results"]["Gemma 3"])
    assert pages[0] == "architectures/" and len(pages) == 5, pages
    assert not {"context-extension/", "start/", "sinusoidal-formula/", "first-principles/"} & set(pages), pages


@built
@pytest.mark.parametrize("query", HIGHLIGHTED)
def test_a_page_listed_for_its_sections_highlights_their_words(built_answer: dict[str, Any], query: str) -> None:
    """Each page's link highlights the words its listed sections matched (review5 S2)."""
    words = set(query.lower().split())
    for group, marks in zip(built_answer["results"][query], built_answer["highlights"][query]):
        page = marks[group.index(next(location for location in group if "#" not in location))]
        found = set().union(*(set(mark.split()) for mark in marks))
        assert set(page.split()) == found and found <= words and found, (group, marks)


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
def test_the_site_serves_the_edited_worker() -> None:
    """The built site's search worker is Material's with the edits of WORKER_FIXES: the worker the
    tests above run (without the token-set fix, queries such as '3' failed on this site)."""
    [served] = sorted((SITE / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert served.name == _package_worker().name
    assert len(WORKER_FIXES) == 3
    expected = patched_worker(_package_worker().read_text(encoding="utf-8"))
    assert served.read_text(encoding="utf-8") == expected != _package_worker().read_text(encoding="utf-8")
