"""What ``check_site`` checks on one page in the browser: images, math, raw TeX, figures and
palettes, axe-core, the reader's checks (``reader_checks``, ``reader_states``) at 1280, 390 and 1920 px, the palette
flash and the first-view weight (:func:`check_page`); and the search box (:func:`check_search`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.site import reader_checks, reader_states
from tests.site.site_browser import AXE, AXE_RUN, BLOCKING_IMPACTS, SEARCH_INDEX, PageResult, _PageVisit
from tests.site.site_pages import page_label

__all__ = ["SEARCH_WORD", "check_page", "check_search", "weight_problems"]

MIN_ALT_WORDS = 8
SCHEMES = {"default": "light", "slate": "dark"}  # Material's scheme names -> our variant names

# Everything checked inside the page, for the palette currently shown. Returns lists of strings.
IN_PAGE_CHECKS = r"""(variant) => {
  const out = {images: [], math: [], rawTex: [], figures: [], palette: [], alt: []};
  const shown = (el) => {
    const style = getComputedStyle(el);
    return style.display !== "none" && style.visibility !== "hidden" && el.getClientRects().length > 0
      && el.getBoundingClientRect().width > 0;
  };
  const short = (text) => text.replace(/\s+/g, " ").trim().slice(0, 100);
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0) out.images.push(img.getAttribute("src"));
  }
  for (const el of document.querySelectorAll(".arithmatex")) {
    if (!el.querySelector(".katex")) out.math.push("unrendered: " + short(el.textContent));
  }
  for (const el of document.querySelectorAll(".katex-error")) {
    out.math.push("KaTeX error: " + short(el.getAttribute("title") || el.textContent));
  }
  // code, and KaTeX's own markup (its MathML keeps the TeX source); notebook Markdown cells sit
  // inside .jp-InputArea too, so only the code editor parts of a notebook are skipped
  const skip = "script, style, pre, code, kbd, samp, textarea, noscript, .katex, .highlight, .highlight-ipynb, .jp-CodeMirrorEditor";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.parentElement && !node.parentElement.closest(skip)
      ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT,
  });
  const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\[A-Za-z]{2,}/;
  const notebookDollar = /\$[^\s$][^$]*\$/;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    const inNotebookMarkdown = node.parentElement.closest(".jp-RenderedMarkdown");
    if (tex.test(text) || (inNotebookMarkdown && notebookDollar.test(text))) {
      if (shown(node.parentElement)) out.rawTex.push(short(text));
    }
  }
  for (const fig of document.querySelectorAll("figure.posenc-figure")) {
    const name = fig.id || "(figure without id)";
    const light = [...fig.querySelectorAll("img")].filter((i) => (i.getAttribute("src") || "").endsWith("#only-light"));
    const dark = [...fig.querySelectorAll("img")].filter((i) => (i.getAttribute("src") || "").endsWith("#only-dark"));
    if (light.length !== 1) out.figures.push(`${name}: ${light.length} light (#only-light) images, expected 1`);
    if (dark.length !== 1) out.figures.push(`${name}: ${dark.length} dark (#only-dark) images, expected 1`);
    if (light.length === 1 && dark.length === 1 && light[0].getAttribute("src").split("#")[0] === dark[0].getAttribute("src").split("#")[0]) {
      out.figures.push(`${name}: light and dark variants are the same file`);
    }
    if (!fig.querySelector("figcaption")) out.figures.push(`${name}: no caption`);
    for (const img of [...light, ...dark]) {
      const alt = (img.getAttribute("alt") || "").trim();
      const words = alt.split(/\s+/).filter(Boolean).length;
      if (words < __MIN_ALT_WORDS__ || /\.(svg|png|gif|jpe?g)\b/i.test(alt)) {
        out.alt.push(`${name}: alt text ${JSON.stringify(alt)} does not describe the figure (${words} words)`);
      }
    }
  }
  for (const img of document.querySelectorAll('img[src$="#only-light"], img[src$="#only-dark"]')) {
    const own = img.getAttribute("src").endsWith("#only-" + variant);
    if (own && !shown(img)) out.palette.push(`${img.getAttribute("src")} is hidden in the ${variant} palette`);
    if (!own && shown(img)) out.palette.push(`${img.getAttribute("src")} is visible in the ${variant} palette`);
  }
  return out;
}""".replace("__MIN_ALT_WORDS__", str(MIN_ALT_WORDS))


def _check_in_palette(visit: _PageVisit, variant: str, axe: bool) -> bool:
    before = len(visit.result.problems)
    found = visit.page.evaluate(IN_PAGE_CHECKS, variant)
    for src in found["images"]:
        visit._problem("image not loaded", f"[{variant}] {src}")
    for key, check in (("math", "math"), ("rawTex", "raw TeX"), ("figures", "figure"), ("palette", "palette"), ("alt", "alt text")):
        for detail in found[key]:
            visit._problem(check, f"[{variant}] {detail}")
    if axe:
        visit.page.add_script_tag(path=str(AXE))  # inline: adds no request
        for violation in visit.page.evaluate(AXE_RUN):
            if violation["impact"] in BLOCKING_IMPACTS:
                nodes = "; ".join(f"{n['target']}: {n['summary'].splitlines()[-1].strip() if n['summary'] else ''}" for n in violation["nodes"][:4])
                more = f" (+{len(violation['nodes']) - 4} more)" if len(violation["nodes"]) > 4 else ""
                visit._problem(
                    f"a11y {violation['impact']}",
                    f"[{variant}] {violation['id']}: {violation['help']} ({violation['helpUrl']}) -- {nodes}{more}",
                )
            else:
                key = f"{violation['id']} ({violation['impact']})"
                visit.result.minor_axe[key] = visit.result.minor_axe.get(key, 0) + len(violation["nodes"])
    return len(visit.result.problems) == before


def _check_reading(visit: _PageVisit, variant: str) -> bool:
    """The reader's checks (tests/site/reader_checks.py) on the page as shown now, at the visit's width."""
    result, before, width = visit.result, len(visit.result.problems), visit.width
    found = visit.page.evaluate(reader_checks.IN_PAGE_READER)
    if variant == "light":
        failures, tolerated = reader_checks.overflow_problems(result.page, width, found["overflow"])
        for line in failures:
            visit._problem("overflow", line)
        result.tolerated += tolerated
        result.reading[f"math@{width}"] = str(len(found["overflow"]["math"]))
        result.reading[f"code@{width}"] = str(len(found["overflow"]["code"]))
    for check, line in reader_checks.reading_problems(found, width):
        visit._problem(check, f"[{variant}] {line}")
    for check, line in reader_states.state_problems(visit.page.evaluate(reader_states.IN_PAGE_STATES), width):
        visit._problem(check, f"[{variant}] {line}")
    if width > 1000:  # buttons in their active states (focused, pressed), in both palettes
        for line in reader_states.button_problems(visit.page.evaluate(reader_states.BUTTON_STATES), width):
            visit._problem("button contrast", f"[{variant}] {line}")
    problems, smallest = reader_checks.figure_text_problems(visit.site_dir, visit.page_path, found["figures"], width)
    for line in problems:
        visit._problem("figure text", f"[{variant}] {line}")
    if smallest is not None:
        key = f"figure px@{width}"
        result.reading[key] = f"{min(smallest, float(result.reading.get(key, smallest))):.1f}"
    if width > 1000:
        result.reading[f"prose@{width}"] = str(reader_checks.prose_problems(found["prose"], width)[1] or "-")
    if width == 1280 and variant == "light":
        bad_copies = 0
        for copy in found["copies"]:
            why = reader_checks.copy_parses(copy["language"], copy["text"])
            if why is not None:
                bad_copies += 1
                visit._problem("copy button", f"{copy['language']} block starting {copy['first']!r}: copied text is not Python: {why}")
        result.reading["copies"] = f"{len(found['copies']) - bad_copies}/{len(found['copies'])}"
    if variant == "dark":
        for line in found["notebookImages"]:
            visit._problem("notebook dark", line)
    return len(result.problems) == before


def _phone_visit(browser: Any, origin: str, base: str, site_dir: Path, page: str, screenshots: Path | None,
                 result: PageResult) -> None:
    """The page at 390 px: overflow counts and a screenshot in each palette."""
    scratch = PageResult(result.page)  # its requests must not count in the desktop page weight
    # a reader whose system prefers dark: the first paint must be dark already (no palette flash)
    visit = _PageVisit(browser, origin, base, site_dir, page, scratch, viewport=reader_checks.PHONE, color_scheme="dark")
    try:
        visit.open()
        first = visit.page.evaluate("() => window.__posencFirstScheme === undefined ? null : window.__posencFirstScheme")
        if first is not None and first != "slate":
            visit._problem("palette flash", f"a reader who prefers dark sees the {first!r} palette first")
        for step in range(2):
            variant = SCHEMES.get(visit.scheme(), "light")
            _check_reading(visit, variant)
            if screenshots is not None:
                shot = screenshots / f"{result.page.replace('/', '__')}-{variant}-390.png"
                visit.screenshot(shot)
            if step == 0 and visit.toggle_palette() is None:
                break
    except Exception as error:  # noqa: BLE001 - reported like any other problem
        visit._problem("browser", f"at 390 px: {type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    seen = {(p.check, p.detail) for p in result.problems}  # console errors etc. repeat at 390 px: once is enough
    result.problems += [p for p in scratch.problems if (p.check, p.detail) not in seen]
    result.reading.update({k: v for k, v in scratch.reading.items()})
    result.tolerated += scratch.tolerated


def weight_problems(result: PageResult, budget: float) -> list[str]:
    """The first view over ``budget`` MB (10^6 bytes), with its three largest files."""
    if result.page_bytes <= budget * 1_000_000:
        return []
    top = sorted(result.loaded.items(), key=lambda item: -item[1])[:3]
    return [f"first view {result.page_bytes / 1e6:.2f} MB > {budget} MB budget (largest: "
            + ", ".join(f"{name} {size / 1e3:.0f} kB" for name, size in top) + ")"]


def _wide_visit(browser: Any, origin: str, base: str, site_dir: Path, page: str, result: PageResult) -> None:
    """The page at 1920 px (light): the prose measure, where the column is widest."""
    scratch = PageResult(result.page)
    visit = _PageVisit(browser, origin, base, site_dir, page, scratch, viewport=reader_checks.WIDE)
    try:
        visit.open()
        found = visit.page.evaluate(reader_checks.IN_PAGE_READER)
        problems, longest = reader_checks.prose_problems(found["prose"], visit.width)
        for line in problems:
            visit._problem("prose measure", line)
        result.reading[f"prose@{visit.width}"] = str(longest or "-")
    except Exception as error:  # noqa: BLE001 - reported like any other problem
        visit._problem("browser", f"at {visit.width} px: {type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    seen = {(p.check, p.detail) for p in result.problems}
    result.problems += [p for p in scratch.problems if (p.check, p.detail) not in seen]


def check_page(browser: Any, origin: str, base: str, site_dir: Path, page: str, screenshots: Path | None, budget: float) -> PageResult:
    started = time.perf_counter()
    result = PageResult(page_label(page))
    visit = _PageVisit(browser, origin, base, site_dir, page, result)
    try:
        visit.open()
        order = [visit.scheme()]
        for step in range(2):
            scheme = order[-1]
            variant = SCHEMES.get(scheme)
            if variant is None:
                visit._problem("palette", f"unknown colour scheme {scheme!r} on the page")
                break
            ok = _check_in_palette(visit, variant, axe=True)
            ok = _check_reading(visit, variant) and ok
            result.schemes[variant] = "ok" if ok else "FAIL"
            if screenshots is not None:
                shot = screenshots / f"{result.page.replace('/', '__')}-{variant}.png"
                visit.screenshot(shot)
            if step == 0:
                new = visit.toggle_palette()
                if new is None or new == scheme:
                    visit._problem("palette", "no working palette toggle: cannot check the other palette")
                    break
                order.append(new)
        if set(result.schemes) != {"light", "dark"}:
            visit._problem("palette", f"checked palettes {sorted(result.schemes)}, expected light and dark")
    except Exception as error:  # noqa: BLE001 - a page that cannot be checked is a failure, not a crash
        visit._problem("browser", f"{type(error).__name__}: {error}".splitlines()[0])
    finally:
        visit.close()
    _phone_visit(browser, origin, base, site_dir, page, screenshots, result)
    _wide_visit(browser, origin, base, site_dir, page, result)
    for line in weight_problems(result, budget):
        visit._problem("page weight", line)
    result.seconds = time.perf_counter() - started
    return result


SEARCH_WORD = "rotary"


def check_search(browser: Any, origin: str, base: str) -> list[str]:
    """Open the home page, focus the search box, type `SEARCH_WORD`: results must appear (the
    search index loads only now) and the index must not have loaded before."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    asked: list[str] = []
    context.on("request", lambda request: asked.append(request.url) if request.url.endswith(SEARCH_INDEX) else None)
    try:
        page = context.new_page()
        page.goto(f"{origin}{base}", wait_until="networkidle", timeout=60_000)
        if asked:
            return ["the search index loaded with the page, before the reader opened search"]
        page.locator(".md-search__input").click()
        page.keyboard.type(SEARCH_WORD, delay=30)
        try:
            page.wait_for_selector(".md-search-result__item", timeout=15_000)
        except Exception:  # noqa: BLE001 - reported as the problem
            return [f"typing {SEARCH_WORD!r} in the search box gave no results within 15 s"]
        return [] if asked else ["search gave results without loading the search index (?)"]
    finally:
        context.close()
