"""MkDocs hooks for the reader's affordances (registered in ``mkdocs.yml`` after ``posenc_site``).

* **Math without flashes**: a one-line script in ``<head>`` marks the document ``posenc-js``, so
  ``posenc.css`` can hide ``.arithmatex`` until ``katex-init.js`` has typeset it (without
  JavaScript the TeX stays visible).
* **Search without TeX**: Material's search index holds each page's text with its math as TeX
  source (``\\(r_i = L/\\lambda_i\\)``); after the build the index is rewritten with every
  ``\\( \\)`` and ``\\[ \\]`` span turned into plain text (``r_i = L/λ_i``), see `tex_to_text`.
* **Repository link, "edit this page"**: ``repo_url`` comes from ``POSENC_REPO_URL`` (mkdocs.yml);
  when it is unset, from the git remote ``origin`` if that is a GitHub or GitLab address; else
  the site has no repository link. Generated pages (the API reference) get no edit link. The
  link is plain: Material's widget would fetch star counts from api.github.com on every visit.
* **Tables from code**: a line ``[[table posenc.module:function | caption]]`` becomes a Markdown
  table of what ``function()`` returns, ``(header, rows)``, computed at build time.
* **Last updated**: each page ends with the date of the last commit that changed its source
  (``git log``), so two builds of one commit give the same bytes; uncommitted pages show none.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.reader")
ROOT = Path(__file__).resolve().parents[1]
JS_MARKER = '<script>document.documentElement.classList.add("posenc-js")</script>'

# ---------------------------------------------------------------------------------------------
# TeX -> plain text, for the search index

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


def clean_search_index(path: Path) -> int:
    """Rewrite Material's search index without TeX; return how many entries changed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for entry in data.get("docs", []):
        for key in ("title", "text"):
            value = entry.get(key)
            notebook = str(entry.get("location", "")).startswith("notebooks/")
            if isinstance(value, str) and ("\\(" in value or "\\[" in value or (notebook and "$" in value)):
                entry[key] = strip_math(value, dollars=notebook)
                changed += 1
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    return changed


# ---------------------------------------------------------------------------------------------
# [[table posenc.module:function | caption]]: a table computed at build time

TABLE_LINE = re.compile(r"^\[\[table\s+(?P<target>posenc(?:\.\w+)*:\w+)\s*(?:\|\s*(?P<caption>.+?))?\s*\]\]\s*$", re.MULTILINE)
_NUMBER = re.compile(r"^[-+−]?[\d,]*\.?\d+(?:e[-+]?\d+)?%?$")


def table_markdown(header: list[str], rows: list[list[Any]], caption: str | None = None, name: str = "") -> str:
    """A Markdown table (numeric columns right-aligned) in a ``<figure>``, with an optional caption.

    >>> print(table_markdown(["method", "ppl"], [["RoPE", "3.9"], ["ALiBi", "12"]]))
    <figure class="posenc-table" markdown="block">
    <BLANKLINE>
    | method | ppl |
    | --- | ---: |
    | RoPE | 3.9 |
    | ALiBi | 12 |
    <BLANKLINE>
    </figure>
    """
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    cells = [[cell(value) for value in row] for row in rows]
    if any(len(row) != len(header) for row in cells):
        raise ValueError(f"table {name!r}: every row must have {len(header)} cells")
    align = ["---:" if cells and all(_NUMBER.match(row[i].replace(" ", "")) for row in cells) else "---"
             for i in range(len(header))]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    ident = f' id="table-{name}"' if name else ""
    caption_html = f"<figcaption>{caption}</figcaption>\n" if caption else ""
    return f'<figure class="posenc-table"{ident} markdown="block">\n\n' + "\n".join(lines) + f"\n\n{caption_html}</figure>"


def render_table(target: str, caption: str | None = None) -> str:
    """Call ``posenc.module:function`` (no arguments), which returns ``(header, rows)``, and
    render its table. The page can show the same function's code (a snippet include), so the
    numbers in the table and the code that makes them are one."""
    import importlib

    module_name, _, function_name = target.partition(":")
    function = getattr(importlib.import_module(module_name), function_name, None)
    if not callable(function):
        raise ValueError(f"[[table {target}]]: {module_name} has no function {function_name!r}")
    header, rows = function()
    return table_markdown(list(header), [list(row) for row in rows], caption, function_name.replace("_", "-"))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    if "[[table" not in markdown:
        return markdown
    from mkdocs.exceptions import PluginError

    def replace(match: re.Match[str]) -> str:
        try:
            return render_table(match["target"], match["caption"])
        except Exception as error:
            raise PluginError(f"{page.file.src_uri}: {error}") from error

    return TABLE_LINE.sub(replace, markdown)


# ---------------------------------------------------------------------------------------------
# repository and git dates


def _git(*args: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout if result.returncode == 0 else ""


def repository_from_remote(remote: str) -> str | None:
    """``https://host/owner/name`` for a GitHub or GitLab remote (https or ssh form), else None.

    >>> repository_from_remote("git@github.com:someone/posenc.git")
    'https://github.com/someone/posenc'
    >>> repository_from_remote("/srv/git/posenc") is None
    True
    """
    match = re.match(r"^(?:https://|git@|ssh://git@)(github\.com|gitlab\.com)[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", remote.strip())
    return f"https://{match[1]}/{match[2]}" if match else None


def last_commit_dates(*folders: str) -> dict[str, str]:
    """``{path: YYYY-MM-DD}`` of the newest commit touching each file under ``folders`` (one git call)."""
    dates: dict[str, str] = {}
    current = ""
    for line in _git("log", "--format=%x00%cs", "--name-only", "--", *folders).splitlines():
        if line.startswith("\0"):
            current = line[1:]
        elif line and current:
            dates.setdefault(line, current)
    return dates


_dates: dict[str, str] = {}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _dates
    if not config.repo_url:
        derived = repository_from_remote(_git("remote", "get-url", "origin"))
        if derived:
            config.repo_url = derived
            config.repo_name = derived.split("/", 3)[-1]
    # MkDocs guesses edit/master/docs/ for a GitHub address; this repository's branch is main
    explicit = os.environ.get("POSENC_EDIT_URI")
    config.edit_uri = explicit or ("edit/main/docs/" if config.repo_url else None)
    _dates = last_commit_dates("docs", "posenc")
    return config


def page_date(page: Page) -> str | None:
    src = page.file.src_uri
    if page.file.generated_by or not page.file.abs_src_path:  # the API reference: its sources
        return max((d for path, d in _dates.items() if path.startswith("posenc/")), default=None)
    return _dates.get(f"docs/{src}")


def on_page_content(html: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    date = page_date(page)
    if date is None:
        return html
    return html + f'\n<p class="posenc-page-meta">Last updated {date} (date of the last commit to this page).</p>\n'


def on_page_context(context: dict[str, Any], page: Page, config: MkDocsConfig, **_: Any) -> dict[str, Any]:
    if page.file.generated_by or not page.file.abs_src_path:
        page.edit_url = None  # generated: there is no file to edit
    return context


def _head_and_source(output: str) -> str:
    # Material's repository widget asks api.github.com for stars and forks on every page view: the
    # site requests nothing from other hosts, so the link stays and the request goes
    output = output.replace('class="md-source" data-md-component="source"', 'class="md-source"')
    return output.replace("</head>", JS_MARKER + "</head>", 1)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return _head_and_source(output)


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    return _head_and_source(output) if template_name == "404.html" else output


def on_post_build(config: MkDocsConfig) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        log.debug("search index: TeX turned into text in %d entries", clean_search_index(index))
