"""MkDocs hook: the line under each chapter's title that says how long it takes, what it assumes,
what you can do after it, and whether it is on the core path.

A chapter page starts with YAML front matter::

    ---
    track: core path            # or "core path, in depth", "side trip", "reference"
    assumes: what attention is
    after: explain why attention needs positions
    ---

"core path" is the Start here page itself; "core path, in depth" is a full chapter of one of its
steps, and names the step (``step: 5``, or ``step: 6 and 8``), shown in the line as "Core path,
in depth (step 5)".

The reading time is **computed**, never typed: the prose words of the page's Markdown source
(`prose_words`: no front matter, code blocks, HTML comments, display math or tags; a macro counts
as one word) at `WORDS_PER_MINUTE`, rounded up. Code is counted apart, in lines, because it is
optional reading on this site (the checks sit in collapsed blocks).

The count is taken from the file on disk, not from the Markdown the other hooks hand on, so what
they add (figures, the "Cite this page" block) is not counted, whatever order the hooks run in.
A page without front matter gets no line; tests/test_reading_time.py requires it on every chapter.
The notebooks (jupytext ``.py``) have no front matter: their fields are in `NOTEBOOKS`, and their
line is counted from their Markdown cells and put under their title after the page is rendered.

Two macros for the front door, on any page: ``[[reading-time PAGE.md]]`` is that page's reading
time in minutes (the home page's "Start here" button), and ``[[repository]]`` is a link to the
repository when there is one (``POSENC_REPO_URL`` or the git remote, see hooks/reader.py), else
the plain words "posenc's repository". Notebook pages get the same link and the clone command under
their download links, only when a repository is known: never a placeholder.
"""

from __future__ import annotations

import math
import re
from html import escape
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

__all__ = ["NOTEBOOKS", "TRACKS", "WORDS_PER_MINUTE", "code_lines", "expand_macros", "front_matter", "minutes",
           "notebook_parts", "notebook_reading_line", "notebook_repository", "prose_words", "reading_line"]

WORDS_PER_MINUTE = 220  # a common figure for reading technical prose on a screen
TRACKS = ("core path", "core path, in depth", "side trip", "reference")
FIELDS = ("track", "assumes", "after")
IN_DEPTH = "core path, in depth"  # the one track whose pages also give ``step``

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>`{3,}|~{3,}).*?\n.*?^(?P=indent)?[ \t]*(?P=mark)[ \t]*$", re.DOTALL | re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DISPLAY_MATH = re.compile(r"\\\[.*?\\\]|\$\$.*?\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"\\\(.*?\\\)", re.DOTALL)
_FIGURE = re.compile(r"\[\[figure\s+[a-z0-9-]+\s*(?:\|\s*(?P<caption>.+?))?\s*\]\]")
_MACRO = re.compile(r"\[\[[^\]]*\]\]")
_LINK = re.compile(r"!?\[(?P<text>[^\]]*)\]\([^)]*\)|\[(?P<ref>[^\]]*)\]\[[^\]]*\]")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_SNIPPET = re.compile(r"^[ \t]*-{2}8<-{2}.*$", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z0-9]")
_READING_TIME = re.compile(r"\[\[reading-time\s+(?P<page>[\w./-]+\.md)\s*\]\]")
_REPOSITORY = "[[repository]]"
_NOTEBOOK_LINKS = re.compile(r'<p class="posenc-download posenc-notebook-links">.*?</p>', re.DOTALL)


def front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` lines of a page's front matter (flat, one line each), ``{}`` when it has none.
    A value is unquoted only when it starts and ends with the same quote.

    >>> front_matter("---\\ntrack: core path\\nassumes: attention\\n---\\n# Title\\n")
    {'track': 'core path', 'assumes': 'attention'}
    >>> front_matter('---\\na: "quoted"\\nb: ends with "a name"\\n---\\n')
    {'a': 'quoted', 'b': 'ends with "a name"'}
    """
    match = _FRONT.match(text)
    if match is None:
        return {}
    fields = {}
    for line in match[1].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t", "#")):
            fields[key.strip()] = _unquote(value.strip())
    return fields


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _without_code(text: str) -> str:
    return _FENCE.sub("", _FRONT.sub("", text, count=1))


def code_lines(text: str) -> int:
    """Lines inside fenced code blocks (the fence lines themselves not counted).

    >>> code_lines("Text\\n```python\\na = 1\\nb = 2\\n```\\n")
    2
    """
    return sum(max(block.group(0).count("\n") - 1, 0) for block in _FENCE.finditer(_FRONT.sub("", text, count=1)))


def prose_words(text: str) -> int:
    """Words a reader reads on the page: code, front matter, comments, display math and HTML tags
    left out; a figure counts its caption; inline math, a link and a ``[[...]]`` macro count their
    visible words (a macro as one).

    >>> prose_words("---\\ntrack: x\\n---\\n# Two words\\n\\n```python\\nprint('not prose')\\n```\\nAnd [three](a.md) \\\\(x^2\\\\).\\n")
    5
    """
    text = _COMMENT.sub("", _without_code(text))
    text = _SNIPPET.sub("", _DISPLAY_MATH.sub(" ", text))
    text = _INLINE_MATH.sub(" x ", text)
    text = _FIGURE.sub(lambda m: f" {m['caption'] or ''} ", text)
    text = _MACRO.sub(" n ", text)
    text = _LINK.sub(lambda m: f" {m['text'] if m['text'] is not None else m['ref']} ", text)
    text = _TAG.sub(" ", text)
    return sum(1 for token in text.split() if _WORD.search(token))


def minutes(words: int) -> int:
    """Minutes of reading, rounded up, at least one.

    >>> minutes(220), minutes(221), minutes(0)
    (1, 2, 1)
    """
    return max(1, math.ceil(words / WORDS_PER_MINUTE))


def reading_line(fields: dict[str, str], words: int, lines: int, where: str = "") -> str:
    """The HTML line shown under a chapter's title."""
    missing = [key for key in FIELDS if not fields.get(key)]
    if missing:
        raise ValueError(f"{where}: front matter lacks {', '.join(missing)} (every chapter gives {', '.join(FIELDS)})")
    track = fields["track"]
    if track not in TRACKS:
        raise ValueError(f"{where}: track: {track!r} is not one of {', '.join(TRACKS)}")
    code = f", plus {lines} lines of optional code" if lines else ""
    slug = re.sub(r"[^a-z]+", "-", track).strip("-")
    return (f'<p class="posenc-reading posenc-track-{slug}"><small>'
            f"<strong>{escape(_track_label(fields, where))}</strong> · {minutes(words)} min of prose{code}. "
            f"<strong>Assumes:</strong> {escape(fields['assumes'])}. "
            f"<strong>After it you can</strong> {escape(fields['after'])}.</small></p>")


def _track_label(fields: dict[str, str], where: str) -> str:
    """The track as the line shows it; a core-path chapter names its step(s).

    >>> _track_label({"track": "core path, in depth", "step": "6 and 8"}, "p.md")
    'Core path, in depth (steps 6 and 8)'
    """
    track = fields["track"]
    step = fields.get("step", "")
    if track != IN_DEPTH:
        if step:
            raise ValueError(f"{where}: step: {step!r} is given, but only track: {IN_DEPTH} has steps")
        return track.capitalize()
    if not re.fullmatch(r"[1-9]\d*(?: (?:and|to) [1-9]\d*)?", step):
        raise ValueError(f"{where}: track: {IN_DEPTH} needs step: N (or 'N and M', 'N to M'), got {step!r}")
    return f"{track.capitalize()} ({'step' if step.isdigit() else 'steps'} {step})"


def _insert_after_title(markdown: str, line: str) -> str:
    title = re.search(r"^# .*$", markdown, re.MULTILINE)
    if title is None:
        return line + "\n\n" + markdown
    return markdown[:title.end()] + "\n\n" + line + "\n" + markdown[title.end():]


def expand_macros(markdown: str, docs_dir: str, repo_url: str | None, where: str = "") -> str:
    """``[[reading-time PAGE.md]]`` and ``[[repository]]`` (see the module's docstring).

    >>> expand_macros("From a clone of [[repository]].", "docs", None)
    "From a clone of posenc's repository."
    >>> expand_macros("[[repository]]", "docs", "https://github.com/someone/posenc")
    "[posenc's repository](https://github.com/someone/posenc)"
    """
    def reading_time(match: re.Match[str]) -> str:
        path = Path(docs_dir, match["page"])
        if not path.is_file():
            raise ValueError(f"{where}: {match[0]}: no page {match['page']} in {docs_dir}")
        return str(minutes(prose_words(path.read_text(encoding="utf-8"))))

    markdown = _READING_TIME.sub(reading_time, markdown)
    link = f"[posenc's repository]({repo_url})" if repo_url else "posenc's repository"
    return markdown.replace(_REPOSITORY, link)


def notebook_repository(html: str, repo_url: str | None) -> str:
    """Under a notebook page's download links: the repository and the command that clones it."""
    if not repo_url:
        return html
    line = (f'<p class="posenc-download">Repository: <a href="{escape(repo_url)}">{escape(repo_url)}</a>. '
            f"To run the notebook locally: <code>git clone {escape(repo_url)}</code>, then "
            "<code>make install</code> in the clone.</p>")
    return _NOTEBOOK_LINKS.sub(lambda match: match[0] + line, html, count=1)


# The notebooks (jupytext .py files) cannot carry Markdown front matter: their fields live here.
NOTEBOOKS = {
    "order_blindness": {"track": "side trip", "assumes": "Why position matters (or Start here, step 1)",
                        "after": "rerun the order-blindness experiment on sentences of your own"},
    "rope_lab": {"track": IN_DEPTH, "step": "5", "assumes": "the RoPE chapter (or Start here, steps 5 and 6)",
                 "after": "rotate queries and keys yourself and check which scores depend only on the offset"},
}


def notebook_parts(source: str) -> tuple[str, int]:
    r"""The Markdown of a jupytext percent-format notebook's Markdown cells, and its lines of code.

    >>> notebook_parts("# %% [markdown]\n# # Title\n# Some words.\n\n# %%\nx = 1\nprint(x)\n")
    ('# Title\nSome words.', 2)
    """
    markdown, code, kind = [], 0, None
    for line in source.splitlines():
        if line.startswith("# %%"):
            kind = "markdown" if "[markdown]" in line else "code"
        elif kind == "markdown" and line.startswith("#"):
            markdown.append(line[2:] if line.startswith("# ") else line[1:])
        elif kind == "code" and line.strip() and not line.lstrip().startswith("#"):
            code += 1
    return "\n".join(markdown).strip(), code


def notebook_reading_line(html: str, name: str, source: str) -> str:
    """The reading line of a notebook page, right after its title."""
    fields = NOTEBOOKS.get(name)
    end = html.find("</h1>", max(html.find("<article"), 0))
    if fields is None or end < 0:
        return html
    markdown, code = notebook_parts(source)
    line = reading_line(fields, prose_words(markdown), code, f"notebooks/{name}.py")
    return html[:end + 5] + line + html[end + 5:]


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    if page.file.src_uri.startswith("notebooks/") and page.file.abs_src_path:
        source = Path(page.file.abs_src_path)
        output = notebook_reading_line(output, source.stem, source.read_text(encoding="utf-8"))
        return notebook_repository(output, config.repo_url)
    return output


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    try:
        markdown = expand_macros(markdown, config.docs_dir, config.repo_url, page.file.src_uri)
    except ValueError as error:
        raise PluginError(str(error)) from error
    source = page.file.abs_src_path
    if page.file.generated_by or not source or not source.endswith(".md"):
        return markdown
    text = Path(source).read_text(encoding="utf-8")
    fields = front_matter(text)
    if not fields:
        return markdown
    try:
        line = reading_line(fields, prose_words(text), code_lines(text), page.file.src_uri)
    except ValueError as error:
        raise PluginError(str(error)) from error
    return _insert_after_title(markdown, line)
