"""MkDocs hooks for the reader's affordances (registered in ``mkdocs.yml`` after ``posenc_site``).

The handlers live here, with what they carry from one event to the next in one object
(`ReaderHooks`); the work is done by one module per concern, beside this one in ``hooks/``:

* ``search_text.py``, **search without TeX**: after the build the search index is rewritten with
  every math span as plain text (``r_i = L/λ_i``, not ``\\(r_i = L/\\lambda_i\\)``).
* ``citations.py``, **references**: ``[[cite KEY]]``, ``[[citet KEY]]``, ``[[references]]`` and
  the generated page ``references.md`` from ``docs/_references.yml``.
* ``page_blocks.py``, **numbered figures** (``[[ref NAME]]``) and the **Cite this page** block at
  the end of every chapter.
* ``result_tables.py``, **tables from code**: ``[[table posenc.module:function | caption]]``.
* ``values.py``, **numbers from results**: ``[[value EXPR | FORMAT]]`` and the hidden claim
  checks ``<!-- check: ... -->`` (vocabulary: ``posenc.experiments.claims``).
* ``repository.py``, **repository link and dates**: ``repo_url`` comes from ``POSENC_REPO_URL``
  (mkdocs.yml); when it is unset, from the git remote ``origin`` if that is a GitHub or GitLab
  address; else the site has no repository link. Generated pages (the API reference) get no
  edit link. Each page ends with the date of the last commit that changed its source
  (``git log``), so two builds of one commit give the same bytes; uncommitted pages show none.

Two small things are done here directly. **Math without flashes**: a one-line script in
``<head>`` marks the document ``posenc-js``, so ``posenc.css`` can hide ``.arithmatex`` until
``katex-init.js`` has typeset it (without JavaScript the TeX stays visible). **No star counts**:
the repository link is plain, because Material's widget would fetch star counts from
api.github.com on every visit.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

# hooks/*.py: MkDocs puts hooks/ on the path while it loads this file
from citations import (
    REFERENCES,
    cite_html,
    cite_references,
    load_references,
    references_page,
)
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from page_blocks import (
    cite_this_page,
    is_chapter,
    label_stacked_cells,
    number_figures,
    page_title,
)
from repository import git, last_commit_dates, repository_from_remote
from result_tables import expand_tables
from search_text import clean_search_index, patch_search_worker
from values import expand_values

__all__ = ["HOOKS", "ReaderHooks"]

log = logging.getLogger("mkdocs.hooks.reader")
JS_MARKER = '<script>document.documentElement.classList.add("posenc-js")</script>'


def _head_and_source(output: str) -> str:
    # Material's repository widget asks api.github.com for stars and forks on every page view: the
    # site requests nothing from other hosts, so the link stays and the request goes
    output = output.replace('class="md-source" data-md-component="source"', 'class="md-source"')
    return output.replace("</head>", JS_MARKER + "</head>", 1)


class ReaderHooks:
    """The MkDocs event handlers of this file, and the state one build carries between them:
    the last commit dates (``{path: YYYY-MM-DD}``, read once in ``on_config``), the bibliography,
    and the URL of the generated references page."""

    def __init__(self) -> None:
        self.dates: dict[str, str] = {}
        self.references: dict[str, dict[str, Any]] = {}
        self.references_url = "references/"

    def page_date(self, page: Page) -> str | None:
        """The date of the last commit to the page's source; for generated pages (the API
        reference), of the newest commit to posenc."""
        if page.file.generated_by or not page.file.abs_src_path:
            return max((d for path, d in self.dates.items() if path.startswith("posenc/")), default=None)
        return self.dates.get(f"docs/{page.file.src_uri}")

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        if not config.repo_url:
            derived = repository_from_remote(git("remote", "get-url", "origin"))
            if derived:
                config.repo_url = derived
                config.repo_name = derived.split("/", 3)[-1]
        # MkDocs guesses edit/master/docs/ for a GitHub address; this repository's branch is main
        explicit = os.environ.get("POSENC_EDIT_URI")
        config.edit_uri = explicit or ("edit/main/docs/" if config.repo_url else None)
        self.dates = last_commit_dates("docs", "posenc")
        self.references = load_references()
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """With a bibliography (docs/_references.yml): publish it as the page references.md, not as data."""
        if self.references:
            data = files.get_file_from_path(REFERENCES.name)
            if data is not None:
                files.remove(data)
            generated = File.generated(config, "references.md", content=references_page(self.references))
            files.append(generated)
            self.references_url = generated.url
        return files

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
        src = page.file.src_uri
        try:
            markdown = expand_values(markdown, src)
            if "[[table" in markdown:
                markdown = expand_tables(markdown, src)
            if 'class="posenc-figure"' in markdown:
                markdown = number_figures(markdown, src)
            if "[[cite" in markdown or "[[references]]" in markdown:
                markdown = cite_references(markdown, src, self.references)
        except ValueError as error:  # the message names the page and the macro
            raise PluginError(str(error)) from error
        if is_chapter(page):
            title = page_title(markdown, str(page.title or page.file.name))
            markdown = markdown.rstrip("\n") + "\n\n" + cite_this_page(
                title, page.url, str(config.site_name), config.site_url, self.page_date(page), config.site_author)
        return markdown

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
        try:
            if "[[cite" in html:  # from a snippet include, expanded after on_page_markdown
                html = cite_html(html, page.url, self.references_url, self.references, page.file.src_uri)
            if 'class="posenc-stack"' in html:
                html = label_stacked_cells(html, page.file.src_uri)
        except ValueError as error:
            raise PluginError(str(error)) from error
        date = self.page_date(page)
        if date is None:
            return html
        return html + f'\n<p class="posenc-page-meta">Last updated {date} (date of the last commit to this page).</p>\n'

    def on_page_context(self, context: dict[str, Any], page: Page, config: MkDocsConfig, **_: Any) -> dict[str, Any]:
        if page.file.generated_by or not page.file.abs_src_path:
            page.edit_url = None  # generated: there is no file to edit
        return context

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        return _head_and_source(output)

    def on_post_template(self, output: str, template_name: str, config: MkDocsConfig) -> str:
        return _head_and_source(output) if template_name == "404.html" else output

    def on_post_build(self, config: MkDocsConfig) -> None:
        index = Path(config.site_dir) / "search" / "search_index.json"
        if index.is_file():
            log.debug("search index: TeX turned into text in %d entries", clean_search_index(index))
            patch_search_worker(Path(config.site_dir))  # search_text.WORKER_FIXES


# MkDocs calls the module's on_* functions: they are the methods of one ReaderHooks
HOOKS = ReaderHooks()
on_config = HOOKS.on_config
on_files = HOOKS.on_files
on_page_markdown = HOOKS.on_page_markdown
on_page_content = HOOKS.on_page_content
on_page_context = HOOKS.on_page_context
on_post_page = HOOKS.on_post_page
on_post_template = HOOKS.on_post_template
on_post_build = HOOKS.on_post_build
