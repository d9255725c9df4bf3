"""What the site's search index holds: math as plain text, prose before code, chapters first.

Material's search index holds each page's text with its math as TeX source
(``\\(r_i = L/\\lambda_i\\)``); after the build `clean_search_index` rewrites the index:

* every ``\\( \\)`` and ``\\[ \\]`` span (and, on notebook pages, ``$ $`` and ``$$ $$``) becomes
  plain text (``r_i = L/λ_i``, see `tex_to_text`), with ``√`` spelled ``sqrt`` as readers type it;
* the code listings left in a chapter's entries go (`drop_code`): their numbers and identifiers
  (every ``3`` of an output, every ``Path``) outranked the prose that explains the idea;
* each entry gets a ``boost`` by the role of its page (`BOOSTS`): the chapters that explain
  an idea rank above the API reference, the bibliography, the widgets and the errata that name it,
  and the chapter that introduces a method above those that apply it (`DEFINING`).

After the build `patch_search_worker` edits Material's search worker (`WORKER_FIXES`): lunr's
token-set names made unambiguous, in a query with a number the sections that also hold the words
beside it ranked first ('Gemma 3'), and a page listed for its sections linked with their terms
highlighted.

The separator that splits words (``plugins: - search: separator:`` in ``mkdocs.yml``) splits at
brackets, quotes and ``=`` too, so that ``sqrt(d_model)`` and ``"rope_theta": 1e6`` give their
words; ``tests/test_search.py`` runs Material's own search worker on the built index with the
queries readers type. `strip_math` also gives the plain page titles of "Cite this page".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["BOOSTS", "DEFINING", "WORKER_FIXES", "boost_for", "clean_search_index", "drop_code", "patch_search_worker",
           "patched_worker", "strip_math", "tex_to_text"]

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠",
    "approx": "≈", "sim": "∼", "equiv": "≡", "infty": "∞", "sum": "Σ", "prod": "Π", "to": "→",
    "rightarrow": "→", "mapsto": "↦", "in": "∈", "pm": "±", "mp": "∓", "ldots": "…", "dots": "…",
    "cdots": "⋯", "lVert": "‖", "rVert": "‖", "Vert": "‖", "lvert": "|", "rvert": "|", "mid": "|",
    "langle": "⟨", "rangle": "⟩", "sqrt": "√", "partial": "∂", "nabla": "∇", "odot": "⊙",
    "otimes": "⊗", "oplus": "⊕", "top": "ᵀ", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈",
    "rceil": "⌉", "circ": "∘", "forall": "∀", "exists": "∃", "quad": " ", "qquad": " ",
    "{": "{", "}": "}", "%": "%", "_": "_", "#": "#", "&": "&", ",": " ", ";": " ", ":": " ", "!": "",
    " ": " ",
}
_DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "displaystyle",
            "textstyle", "nonumber", "notag", "limits", "underbrace", "overbrace", "tag"}
_WRAPPERS = re.compile(r"\\(?:text|textrm|textit|textbf|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|"
                       r"boldsymbol|bm|operatorname|hat|tilde|bar|vec|overline|underline)\s*\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")  # a one-word sub- or superscript: d_{model} -> d_model
_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}(?:\{[^{}]*\})?")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_DOLLAR_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\s][^$]*?)\$", re.DOTALL)  # notebook cells


def tex_to_text(tex: str) -> str:
    """A readable plain-text rendering of a TeX formula, with no backslash commands left.

    >>> tex_to_text(r"r_i = L/\\lambda_i")
    'r_i = L/λ_i'
    >>> tex_to_text(r"\\frac{\\sin(m\\theta)}{\\sqrt{d}} \\le \\text{base}^{2i/d}")
    '(sin(mθ))/(√(d)) ≤ base^2i/d'
    """
    text = _ENVIRONMENT.sub(" ", tex).replace("\\\\", " ").replace("&", " ")
    for _ in range(8):  # innermost first: nested fractions and wrappers
        new = _FRACTION.sub(r"(\1)/(\2)", _ROOT.sub(r"√(\1)", _WRAPPERS.sub(r"\1", text)))
        new = _SCRIPT.sub(lambda m: m[1] + m[2] if " " not in m[2] else m[0], new)
        if new == text:
            break
        text = new

    def command(match: re.Match[str]) -> str:
        name = match[1]
        if name in _DROPPED:
            return ""
        return _SYMBOLS.get(name, name)

    text = _COMMAND.sub(command, text)
    text = re.sub(r"[{}]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_math(text: str, *, dollars: bool = False) -> str:
    """Every ``\\( \\)`` / ``\\[ \\]`` span of ``text`` (and ``$ $``, ``$$ $$`` if ``dollars``, as
    in notebooks) as plain text (see `tex_to_text`).

    >>> strip_math(r"wavelength \\(2\\pi\\) and $m\\theta_i$", dollars=True)
    'wavelength 2π and mθ_i'
    """
    def plain(match: re.Match[str]) -> str:
        return tex_to_text(match[1] if match[1] is not None else match[2])

    text = _MATH.sub(plain, text)
    return _DOLLAR_MATH.sub(plain, text) if dollars else text


#: The boost of a page's entries by the page's role (the first prefix of the page's address that
#: matches; "" is the home page only; the chapters keep 1). Material multiplies an entry's score by it.
BOOSTS: tuple[tuple[str, float, str], ...] = (
    ("api/", 0.1, "the reference of a function: found by its name in the title, not by an idea"),
    ("references/", 0.1, "the bibliography names every method once"),
    ("notebooks/", 0.3, "the labs repeat the chapters' words around code"),
    ("explore/", 0.3, "the widgets name the methods they draw"),
    ("errata/", 0.4, "each entry quotes a claim the chapter states correctly"),
    ("models/", 0.3, "the model table names every config key and family in its rows"),
    ("pitfalls/", 0.5, "each item points to the chapter that explains it"),
    ("how-checked/", 0.5, "it names the chapters' checks, not the ideas"),
    ("engines/", 0.5, "it names each method an engine implements; the method's chapter explains it"),
    ("start/", 0.7, "the core path summarises every chapter in a few lines"),
    ("", 0.5, "the home page (location '' and its sections) names every chapter's idea"),
)


#: The chapters that introduce a method, ahead of the chapters that apply it (``RoPE`` finds the
#: RoPE chapter before "RoPE in today's models").
DEFINING = ("sinusoidal-formula/", "learned/", "relative/", "alibi/", "rope/", "context-extension/",
            "beyond-alibi/", "inside-attention/", "positions-2d/")
DEFINING_BOOST = 1.2


def boost_for(location: str) -> float:
    """The boost of the entry at ``location`` (``"api/rope/#posenc.rope.apply_rope"``): see `BOOSTS`.

    >>> boost_for("api/rope/#posenc.rope.apply_rope"), boost_for("rope-today/#layouts"), boost_for("#reading-order")
    (0.1, 1.0, 0.5)
    >>> boost_for("rope/#the-rotation")  # the chapter that introduces RoPE
    1.2
    """
    page = location.split("#", 1)[0]
    if page in DEFINING:
        return DEFINING_BOOST
    return next((boost for prefix, boost, _ in BOOSTS if (page.startswith(prefix) if prefix else page == "")), 1.0)


_CODE = re.compile(r"<pre\b.*?</pre>", re.DOTALL)
# a result-table cell flattened by the indexer: a mean run into its range, "0.560.45–0.61"
_GLUED = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)+(?:–[\d.]+)?")


# a number written with thousands separators, "160,000": the separator splits it into "160" and "000"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def join_thousands(text: str) -> str:
    """Numbers without their thousands separators: ``160,000`` is indexed as one word, ``160000``,
    not as ``160`` and ``000``. The many short digit words the split makes trip lunr's token set
    (the nodes of its minimised word graph are keyed by label and child id run together, so nodes
    with digit edges can collide), which then fails on queries such as ``n`` or ``2``.

    >>> join_thousands("base 160,000 and 8,192 tokens; the pair (1,2); 1,000,000")
    'base 160000 and 8192 tokens; the pair (1,2); 1000000'
    """
    return _THOUSANDS.sub("", text)


def drop_code(text: str) -> str:
    """An entry's text without its code listings (``<pre>`` blocks) and without the numbers of
    result tables that the indexer glued together (``0.560.45–0.61``: no word anyone types, and
    enough of them trip lunr's token set, which then fails on queries such as ``l`` or ``4``);
    inline code stays.

    >>> drop_code("<p>The base <code>rope_theta</code>:</p> <pre><code>&gt;&gt;&gt; Path(3)\\n</code></pre> <p>Next.</p>")
    '<p>The base <code>rope_theta</code>:</p>  <p>Next.</p>'
    >>> drop_code("<p>rope 0.560.45–0.61 at 8L, base 1.5</p>")
    '<p>rope   at 8L, base 1.5</p>'
    """
    return _GLUED.sub(" ", _CODE.sub("", text))


def clean_search_index(path: Path) -> int:
    """Rewrite Material's search index: math as text, no code listings outside the API pages, a
    boost per page role; return how many titles and texts changed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for entry in data.get("docs", []):
        location = str(entry.get("location", ""))
        notebook = location.startswith("notebooks/")
        for key in ("title", "text"):
            value = entry.get(key)
            if not isinstance(value, str):
                continue
            if "\\(" in value or "\\[" in value or (notebook and "$" in value):
                entry[key] = strip_math(value, dollars=notebook).replace("√", "sqrt")
            if key == "text" and not location.startswith("api/"):  # an API entry's first block is its signature
                entry[key] = drop_code(entry[key])
            if key == "text":
                entry[key] = join_thousands(entry[key])
            changed += entry[key] != value
        if boost_for(location) != 1.0:
            entry["boost"] = boost_for(location)
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    return changed


# lunr 2.3.9, bundled in Material's search worker, names a token-set node by its final flag and
# each edge's label and child id run together ("0" + "1" + "23" + "4" + "5"), and its builder
# merges nodes whose names are equal: with digit labels two different nodes can share a name
# ("1" -> 23, "4" -> 5 and "1" -> 2, "3" -> 45 both give "012345"), and the merged index then
# answers a query with a term it does not hold ("Cannot read properties of undefined (reading
# '_index')"; Material shows nothing). Issue 34's and this session's sweeps of one-key queries met
# it twice ('n' and '2', then '3', 'Gemma 3' and 'Phi-3'); lunr's issue #503 (open) reports an index
# that misses words it holds. A comma after each id makes the names unambiguous: labels are one
# character of a term, and the search separator splits terms at commas.
_TOKEN_SET_NAME = "e=e+s+o.id}return e}"
_TOKEN_SET_NAME_FIXED = 'e=e+s+o.id+","}return e}'

# Material's worker adds a trailing wildcard to every query term (search as you type): '3' then
# finds every word that starts with a 3 ('3.1', '3.', '32', '3000'), and a heading's title weighs
# a thousand times its text, so 'Gemma 3' listed "Llama 3.1", "3. Sinusoids" and "positions 0 to
# 3" above the sections that discuss Gemma 3 in their text (review5 S1). In a query that holds a
# number, the sections holding more of its words now rank first: a number names the thing beside
# it. The wildcard stays: 'Llama 3' should find "Llama 3.1", and "Llama 4." ends a sentence.
_SCORE = "score:a*(1+K(g,2)),terms:f"
_SCORE_NUMBER_TIER = (r"score:a*(1+K(g,2))*(Object.keys(f).some(l=>/^\d+$/.test(l))"
                      r"?K(1e6,Object.values(f).filter(l=>l).length):1),terms:f")
# A page listed for its sections alone gets an entry with no terms, so its link carries an empty
# ?h= and the page opens with nothing highlighted (review5 S2); its sections' terms are the page's.
_PAGE_NO_TERMS = "o.push(B(_({},a),{score:0,terms:{}}))"
_PAGE_SECTION_TERMS = ("o.push(B(_({},a),{score:0,terms:o.reduce((m,c)=>{for(let k in c.terms)"
                       "m[k]=m[k]||c.terms[k];return m},{})}))")

#: The edits to Material's search worker (its minified text): (what the edit does, the text, its
#: replacement). Each text must occur exactly once, so that a new Material fails the build here.
WORKER_FIXES: tuple[tuple[str, str, str], ...] = (
    ("lunr's token-set names made unambiguous", _TOKEN_SET_NAME, _TOKEN_SET_NAME_FIXED),
    ("in a query with a number (Gemma 3), the sections holding more of its words rank first", _SCORE,
     _SCORE_NUMBER_TIER),
    ("a page listed for its sections highlights their terms", _PAGE_NO_TERMS, _PAGE_SECTION_TERMS),
)


def patched_worker(source: str) -> str:
    """Material's search worker (its minified text) with `WORKER_FIXES` applied; a worker that holds
    them already comes back unchanged.

    >>> worker = "TokenSet.prototype.toString=...;" + ";".join(old for _, old, _ in WORKER_FIXES)
    >>> fixed = patched_worker(worker)
    >>> [new in fixed for _, _, new in WORKER_FIXES], patched_worker(fixed) == fixed
    ([True, True, True], True)
    >>> patched_worker(worker.replace("score:a*", "score:b*"))
    Traceback (most recent call last):
    ...
    ValueError: Material's search worker holds 0 copies of 'score:a*(1+K(g,2)),terms:f' (one expected), ...
    """
    if "TokenSet.prototype.toString" not in source:
        raise ValueError("this is not Material's search worker: it holds no TokenSet.prototype.toString")
    for what, old, new in WORKER_FIXES:
        if source.count(new) == 1 and old not in source:  # fixed already (a rebuild that kept the file)
            continue
        if source.count(old) != 1:
            raise ValueError(f"Material's search worker holds {source.count(old)} copies of {old!r} (one "
                             f"expected), the text of the edit {what!r}: check what the worker does there "
                             "now (hooks/search_text.py WORKER_FIXES) and update the edit")
        source = source.replace(old, new)
    return source


def patch_search_worker(site_dir: Path) -> list[Path]:
    """Apply `patched_worker` to the built site's search worker(s); return them."""
    workers = sorted((site_dir / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    for worker in workers:
        worker.write_text(patched_worker(worker.read_text(encoding="utf-8")), encoding="utf-8")
    return workers
