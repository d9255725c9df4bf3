"""The reading-time line of every chapter (hooks/reading_time.py): what it counts, that every
chapter gives its front matter, and that the core path stays short enough to finish."""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "hooks"))

import reading_time  # noqa: E402

# Pages that are not chapters: the home page (the front door, no reading line) and the notebooks
# (.py, rendered by mkdocs-jupyter without front matter; their first cell says what they need).
NOT_CHAPTERS = {"index.md"}
CORE_PATH_MINUTES = 45


def chapters() -> list[Path]:
    return sorted(path for path in DOCS.glob("*.md") if path.name not in NOT_CHAPTERS)


def test_docstring_examples() -> None:
    failed, attempted = doctest.testmod(reading_time)
    assert attempted >= 6 and failed == 0


def test_code_is_not_prose() -> None:
    prose = "One two three four five.\n"
    fenced = prose + "\n```python\nlots of words inside a code block here\n```\n"
    indented = prose + '\n??? note "Check it"\n\n    ```pycon\n    >>> more words in a collapsed block\n    1\n    ```\n'
    assert reading_time.prose_words(prose) == 5
    assert reading_time.prose_words(fenced) == 5
    assert reading_time.prose_words(indented) == 5 + 3  # the block's title is read, its code is not
    assert reading_time.code_lines(fenced) == 1 and reading_time.code_lines(indented) == 2


def test_what_else_is_not_counted() -> None:
    page = ("---\ntrack: side trip\nassumes: a b c d\nafter: e f g\n---\n# Title here\n"
            "<!-- check: lower(a, b) and many words -->\n\\[ x = y + z \\]\n"
            "[[figure some-name | A caption of five words.]]\n"
            "A [link text](page.md#anchor) and [[value lm.rope@L | .2f]] and <span class=\"x\">tag</span>.\n")
    # Title here (2) + caption (5) + "A link text and n and tag" (7)
    assert reading_time.prose_words(page) == 14


def test_minutes_round_up() -> None:
    assert reading_time.WORDS_PER_MINUTE == 220
    assert [reading_time.minutes(w) for w in (1, 220, 221, 440, 441)] == [1, 1, 2, 2, 3]


@pytest.mark.parametrize("page", chapters(), ids=lambda p: p.name)
def test_every_chapter_has_front_matter(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    fields = reading_time.front_matter(text)
    assert fields, f"{page.name}: no front matter (track, assumes, after) at the top of the page"
    line = reading_time.reading_line(fields, reading_time.prose_words(text), reading_time.code_lines(text), page.name)
    assert f"{reading_time.minutes(reading_time.prose_words(text))} min of prose" in line
    assert fields["track"] in reading_time.TRACKS


def test_front_matter_errors_name_what_is_missing() -> None:
    with pytest.raises(ValueError, match="lacks after"):
        reading_time.reading_line({"track": "core path", "assumes": "x"}, 10, 0, "p.md")
    with pytest.raises(ValueError, match="'detour' is not one of"):
        reading_time.reading_line({"track": "detour", "assumes": "x", "after": "y"}, 10, 0, "p.md")


def test_quotes_are_stripped_only_in_pairs() -> None:
    # A value that merely ends in a quote keeps it (review5 I5: 'and "Beyond ALiBi' lost its close).
    text = '---\nassumes: the ALiBi chapter, and "Beyond ALiBi"\nafter: \'quoted\'\n---\n'
    assert reading_time.front_matter(text) == {"assumes": 'the ALiBi chapter, and "Beyond ALiBi"',
                                               "after": "quoted"}


def test_core_path_chapters_say_so_and_name_their_step() -> None:
    # The nav's "Core path, in depth" group: each page's line says that track and its step, never "Side trip".
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1].split("\n  - ", 4)
    group = next(part for part in nav if part.startswith('"Core path, in depth'))
    pages = re.findall(r":\s*([\w-]+\.md)\s*$", group, re.MULTILINE)
    assert len(pages) >= 9, group
    for name in pages:
        fields = reading_time.front_matter((DOCS / name).read_text(encoding="utf-8"))
        assert fields["track"] == "core path, in depth", name
        line = reading_time.reading_line(fields, 10, 0, name)
        assert f"Core path, in depth (step{'s' if ' ' in fields['step'] else ''} {fields['step']})" in line
        assert "Side trip" not in line
    assert reading_time.NOTEBOOKS["rope_lab"]["track"] == "core path, in depth"


def test_step_errors_name_the_field() -> None:
    base = {"assumes": "x", "after": "y"}
    with pytest.raises(ValueError, match="needs step: N"):
        reading_time.reading_line({"track": "core path, in depth", **base}, 10, 0, "p.md")
    with pytest.raises(ValueError, match="only track: core path, in depth has steps"):
        reading_time.reading_line({"track": "side trip", "step": "3", **base}, 10, 0, "p.md")


def test_core_path_is_at_most_45_minutes_of_prose() -> None:
    core = {page.name: reading_time.prose_words(page.read_text(encoding="utf-8")) for page in chapters()
            if reading_time.front_matter(page.read_text(encoding="utf-8")).get("track") == "core path"}
    assert "start.md" in core, "start.md is the core path"
    total = sum(reading_time.minutes(words) for words in core.values())
    assert total <= CORE_PATH_MINUTES, f"core path {total} min of prose ({core}), more than {CORE_PATH_MINUTES}"


def test_core_path_leads_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert nav[0].strip() == "- Home: index.md"
    assert nav[1].strip().endswith(": start.md") and "Start here" in nav[1]
    listed = set(re.findall(r":\s*\"?([\w./-]+\.(?:md|py))\"?\s*$", "\n".join(nav), re.MULTILINE))
    missing = {page.name for page in DOCS.glob("*.md")} - listed
    assert not missing, f"pages missing from the nav: {sorted(missing)}"


def test_core_path_has_no_errata_or_test_talk() -> None:
    text = (DOCS / "start.md").read_text(encoding="utf-8")
    assert "errata" not in text.lower()
    assert "test suite" not in text.lower()


def test_home_page_front_door() -> None:
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    first_screen = text.split("\n## ", 1)[0]
    assert "(start.md)" in first_screen and "Start here" in first_screen
    for track in ("## Learn it", "## Look something up", "## Reproduce it"):
        assert track in text
    assert "(how-checked.md)" in first_screen


def test_notebooks_say_how_to_install_from_a_clone() -> None:
    for notebook in (DOCS / "notebooks").glob("*.py"):
        source = notebook.read_text()
        assert "<repository" not in source and "git+<" not in source, f"{notebook.name}: a placeholder"
        assert "make install" in source and "pip install -e ." in source, notebook.name


def test_repository_line_on_notebook_pages() -> None:
    page = '<h1>T</h1><p class="posenc-download posenc-notebook-links"><a>Download</a></p><p>Body</p>'
    assert reading_time.notebook_repository(page, None) == page
    with_repo = reading_time.notebook_repository(page, "https://github.com/someone/posenc")
    assert "git clone https://github.com/someone/posenc" in with_repo
    assert with_repo.index("git clone") < with_repo.index("<p>Body</p>")


def test_every_notebook_has_its_fields_and_a_line() -> None:
    notebooks = sorted((DOCS / "notebooks").glob("*.py"))
    assert notebooks and {path.stem for path in notebooks} == set(reading_time.NOTEBOOKS)
    for path in notebooks:
        page = '<header><h1>no</h1></header><article class="md-content__inner"><h1>Title</h1><p>Body</p></article>'
        out = reading_time.notebook_reading_line(page, path.stem, path.read_text(encoding="utf-8"))
        markdown, code = reading_time.notebook_parts(path.read_text(encoding="utf-8"))
        assert code > 0 and reading_time.prose_words(markdown) > 0
        assert out.index("Title</h1>") < out.index("min of prose") < out.index("<p>Body</p>")
