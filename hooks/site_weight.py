"""What a first view of a page downloads, and what it shows before the theme's script runs.

Pure functions on a page's HTML (or the search index), called by ``posenc_site.py``:

* `drop_math_assets`: the math loader (``katex-init.js``, which fetches KaTeX, about 330 kB with
  its fonts, when a formula comes near the viewport) only on pages that have math.
* `noscript_fallbacks`: the static figures inside an explorer placeholder (``div.posenc-explorer``)
  are what readers without scripts see; with scripts the widget replaces them at once, so their
  images sit in ``<noscript>`` and are never downloaded (the animator's GIF alone is 423 kB).
  ``widgets.js`` turns them back into images for printing.
* `palette_script`: a first-time reader whose system prefers dark gets the dark palette before
  the page is painted (Material applies the media query only when its bundle has loaded, at the
  end of the page, so the light palette flashed first).
* `DEFER_SEARCH_INDEX`: Material's search asks for the whole site's search index as soon as a page
  loads; this script holds that request back until the reader opens the search box.
* `prune_search_index`: the index keeps what readers search for (prose, headings, names, the code
  they would type) and drops what they do not: printed outputs and the bodies of code listings.
* `minify_css`: the site's own stylesheets are served without their comments and runs of
  whitespace (posenc.css and explorer.css: 23 kB -> 17 kB on every first view).
* `code_break_points`: long names in inline code (``apply_rotary_pos_emb``) may break only where a
  reader would split them, after an underscore or a dot or between words of a CamelCase name,
  not at any letter (a narrow table cell broke ``apply_rotary_/pos_emb`` mid-word).
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

__all__ = ["DEFER_SEARCH_INDEX", "code_break_points", "drop_math_assets", "has_math", "minify_css", "noscript_fallbacks",
           "palette_script", "prune_search_index", "prune_search_text"]

_KATEX_TAG = re.compile(r'<link[^>]*href="[^"]*assets/katex/katex\.min\.css"[^>]*>'
                        r'|<script[^>]*src="[^"]*(?:assets/katex/[^"]*|javascripts/katex-init\.js)"[^>]*></script>')
_NOTEBOOK_MATH = re.compile(r'class="[^"]*jp-RenderedMarkdown[^"]*"[^>]*>(?:(?!</div>).)*?(?:\$|\\\(|\\\[)', re.DOTALL)


def has_math(html: str) -> bool:
    """Whether the page has math for KaTeX: an ``arithmatex`` element (Markdown pages) or a
    ``$``, ``\\(`` or ``\\[`` in a notebook's Markdown cell.

    >>> has_math('<p><span class="arithmatex">\\\\(x\\\\)</span></p>'), has_math("<p>no math, $5</p>")
    (True, False)
    """
    return 'class="arithmatex' in html or bool(_NOTEBOOK_MATH.search(html))


def drop_math_assets(html: str) -> str:
    """The page without KaTeX's stylesheet and scripts (and katex-init.js) if it has no math.

    >>> page = ('<head><link rel="stylesheet" href="../assets/katex/katex.min.css"></head><body>'
    ...         '<script src="../assets/katex/katex.min.js"></script><script src="../javascripts/katex-init.js"></script>')
    >>> drop_math_assets(page)
    '<head></head><body>'
    >>> drop_math_assets(page + '<span class="arithmatex">') == page + '<span class="arithmatex">'
    True
    """
    return html if has_math(html) else _KATEX_TAG.sub("", html)


_PLACEHOLDER = re.compile(r'(<div class="posenc-explorer"[^>]*>)(.*?)(</div>)', re.DOTALL)
_FALLBACK_IMAGE = re.compile(r"<picture\b.*?</picture>|<img\b[^>]*>", re.DOTALL)


def noscript_fallbacks(html: str) -> str:
    """Images inside explorer placeholders wrapped in ``<noscript>``: shown without scripts, not
    downloaded with them.

    >>> noscript_fallbacks('<div class="posenc-explorer" data-widget="x"><figure><img src="a.gif">'
    ...                    '<figcaption>A</figcaption></figure></div><img src="b.svg">')
    '<div class="posenc-explorer" data-widget="x"><figure><noscript><img src="a.gif"></noscript><figcaption>A</figcaption></figure></div><img src="b.svg">'
    """
    def wrap(match: re.Match[str]) -> str:
        inner = _FALLBACK_IMAGE.sub(lambda image: f"<noscript>{image[0]}</noscript>", match[2])
        return match[1] + inner + match[3]

    return _PLACEHOLDER.sub(wrap, html)


def palette_script(palettes: list[dict[str, Any]]) -> str:
    """A script for the top of ``<body>``: with no palette chosen yet (Material keeps the reader's
    choice in its ``__palette`` storage entry), apply the first palette whose media query matches.

    >>> script = palette_script([{"media": "(prefers-color-scheme: dark)", "scheme": "slate", "primary": "indigo"}])
    >>> '"scheme": "slate"' in script and script.startswith("<script>")
    True
    """
    choices = [{key: str(value) for key, value in entry.items() if key in ("media", "scheme", "primary", "accent")}
               for entry in palettes if entry.get("media")]
    return ("<script>(function(){var p=typeof __md_get==='function'&&__md_get('__palette');"
            "if(p&&p.color)return;var c=" + json.dumps(choices) + ";"
            "for(var i=0;i<c.length;i++){if(matchMedia(c[i].media).matches){"
            "for(var k in c[i])document.body.setAttribute('data-md-color-'+k,c[i][k].replace(/ /g,'-'));return}}})()"
            "</script>")


# Material loads the index with XMLHttpRequest (GET .../search/search_index.json) when the page
# starts. The request is held until the reader focuses the search box (click, tap, or the "/",
# "s", "f" shortcuts, which focus it) or ticks its toggle (the search icon on a phone); then it is
# sent as it was. Nothing else is touched; if Material ever loads the index another way, the
# index simply loads at start as before.
DEFER_SEARCH_INDEX = """<script>(function(){
var held=[],open=false,X=XMLHttpRequest.prototype,o=X.open,s=X.send;
function go(){if(open)return;open=true;held.splice(0).forEach(function(f){f()})}
X.open=function(m,u){this.__posencHold=/\\/search\\/search_index\\.json(?:[?#]|$)/.test(String(u));return o.apply(this,arguments)};
X.send=function(){var x=this,a=arguments;if(x.__posencHold&&!open){held.push(function(){s.apply(x,a)});return}return s.apply(x,a)};
document.addEventListener("focusin",function(e){if(e.target.closest&&e.target.closest(".md-search"))go()});
document.addEventListener("change",function(e){if(e.target.id==="__search"&&e.target.checked)go()});
window.posencLoadSearch=go;
})()</script>"""


_PRE = re.compile(r"<pre><code>(.*?)</code></pre>", re.DOTALL)
_DEFINITION = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w+")


def prune_search_text(text: str, *, keep_first_block: bool = False) -> str:
    """One search entry's text without printed outputs and code-listing bodies: a doctest block
    keeps its ``>>>``/``...`` lines, any other block its ``def``/``class`` lines (so a search for
    a function's name still finds its listing); ``keep_first_block`` keeps an API entry's
    signature whole. A trailing pilcrow (notebook heading anchors) goes too.

    >>> prune_search_text("<p>x</p><pre><code>&gt;&gt;&gt; 1 + 1\\n2\\n</code></pre>")
    '<p>x</p><pre><code>&gt;&gt;&gt; 1 + 1\\n</code></pre>'
    >>> prune_search_text("<pre><code>def f(x):\\n    return x\\n</code></pre>")
    '<pre><code>def f(x):\\n</code></pre>'
    """
    def block(match: re.Match[str]) -> str:
        if keep_first_block and match.start() == 0:
            return match[0]
        lines = match[1].split("\n")
        if unescape(lines[0]).startswith(">>>"):
            kept = [line for line in lines if unescape(line).startswith((">>>", "..."))]
        else:
            kept = [line for line in lines if _DEFINITION.match(unescape(line))]
        return f"<pre><code>{chr(10).join(kept)}\n</code></pre>" if kept else ""

    return _PRE.sub(block, text).replace("¶", "")


def prune_search_index(path: Path) -> tuple[int, int]:
    """Rewrite Material's search index with `prune_search_text` applied to every entry (and the
    pilcrow dropped from titles); return the sizes in bytes before and after."""
    before = path.read_bytes()
    data = json.loads(before)
    for entry in data.get("docs", []):
        api = str(entry.get("location", "")).startswith("api/")
        entry["text"] = prune_search_text(str(entry.get("text", "")), keep_first_block=api)
        entry["title"] = str(entry.get("title", "")).replace("¶", "").strip()
    after = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path.write_bytes(after)
    return len(before), len(after)


_PRE_BLOCK = re.compile(r"(<pre\b.*?</pre>)", re.DOTALL)
_INLINE_CODE = re.compile(r"<code>([^<]{12,})</code>")
_BREAK = re.compile(r"(?<=[A-Za-z0-9]_)(?=[A-Za-z0-9])|(?<=[a-z0-9]\.)(?=[A-Za-z_])|(?<=[a-zA-Z])(?=[A-Z][a-z])")


def code_break_points(html: str) -> str:
    """Inline code (outside ``<pre>``) of 12 characters or more with ``<wbr>`` where its name
    may break: after ``_`` or ``.`` between words, and between the words of a CamelCase name.

    >>> code_break_points("<p><code>apply_rotary_pos_emb</code> and <code>GPTNeoXRotaryEmbedding</code></p>")
    '<p><code>apply_<wbr>rotary_<wbr>pos_<wbr>emb</code> and <code>GPT<wbr>NeoX<wbr>Rotary<wbr>Embedding</code></p>'
    >>> code_break_points("<pre><code>apply_rotary_pos_emb</code></pre>")
    '<pre><code>apply_rotary_pos_emb</code></pre>'
    """
    parts = _PRE_BLOCK.split(html)
    for index in range(0, len(parts), 2):  # the odd parts are <pre> blocks
        parts[index] = _INLINE_CODE.sub(lambda m: f"<code>{_BREAK.sub('<wbr>', m[1])}</code>", parts[index])
    return "".join(parts)


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_SPACE = re.compile(r"\s+")
_CSS_PUNCTUATION = re.compile(r"\s*([{};])\s*")


def minify_css(css: str) -> str:
    """``css`` without comments and with whitespace collapsed (for stylesheets with no strings that
    hold ``/*`` or meaningful runs of spaces, as the site's own).

    >>> minify_css("/* why */\\n.a  b {\\n  color: red;\\n}\\n")
    '.a b{color: red;}'
    """
    return _CSS_PUNCTUATION.sub(r"\1", _CSS_SPACE.sub(" ", _CSS_COMMENT.sub("", css))).strip()
