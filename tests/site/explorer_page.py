"""The Explore page in Chromium: opened with every widget upgraded (failing on console errors,
failed or external requests), its palettes, axe-core, and its static figures without scripts and
in print: see ``check_explorer``'s docstring (3 to 5).
"""

from __future__ import annotations

from typing import Any

from tests.site.explorer_parity import Checker
from tests.site.site_browser import AXE, AXE_RUN, BLOCKING_IMPACTS

__all__ = ["WIDGETS", "check_fallbacks", "check_print", "check_without_scripts", "drawings", "open_page", "run_axe",
           "toggle_palette"]

WIDGETS = ["sinusoidal", "rope-scaling", "rope-rotation", "alibi", "t5-buckets", "rope-inspector"]


def drawings(page: Any) -> str:
    return str(page.evaluate("() => [...document.querySelectorAll('svg.posenc-explorer__plot')].map((s) => s.outerHTML).join('')"))


def run_axe(page: Any, variant: str, check: Checker) -> None:
    page.add_script_tag(path=str(AXE))
    for violation in page.evaluate(AXE_RUN):
        if violation["impact"] in BLOCKING_IMPACTS:
            nodes = "; ".join(n["target"] for n in violation["nodes"][:4])
            check.fail(f"axe [{variant}]", f"{violation['id']} ({violation['impact']}): {violation['help']} -- {nodes}")
    check.count("axe runs")


def toggle_palette(page: Any) -> str:
    before = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
    page.locator('form[data-md-component="palette"] label:not([hidden])').click()
    page.wait_for_function("(b) => document.body.getAttribute('data-md-color-scheme') !== b", arg=before, timeout=5_000)
    page.wait_for_timeout(300)
    return str(page.evaluate("() => document.body.getAttribute('data-md-color-scheme')"))


def open_page(browser: Any, url: str, origin: str, check: Checker, width: int, scheme: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  reduced_motion="reduce", service_workers="block")

    def route(request_route: Any) -> None:
        request_url = request_route.request.url
        if request_url.startswith(origin + "/") or request_url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            check.fail("external request", f"{request_url} (blocked)")
            request_route.abort("blockedbyclient")

    context.route("**/*", route)
    page = context.new_page()
    def console(message: Any) -> None:
        if message.type == "error":
            check.fail("console error", message.text)

    def response(reply: Any) -> None:
        if reply.status >= 400:
            check.fail("HTTP error", f"{reply.status} {reply.url}")

    page.on("console", console)
    page.on("pageerror", lambda error: check.fail("page error", str(error)))
    page.on("requestfailed", lambda request: check.fail("failed request", f"{request.url}: {request.failure}"))
    page.on("response", response)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url, wait_until="networkidle", timeout=60_000)
    # the inspector's scripts and data (explorer.js, group "config") wait until it comes near
    early = [u for u in requested if u.endswith(("rope-data.js", "inspector.js", "rope_params.js"))]
    if early:
        check.fail("first view", f"the inspector's files load before it comes near: {early}")
    page.locator(".posenc-explorer[data-widget='rope-inspector']").scroll_into_view_if_needed()
    page.wait_for_function(f"() => document.querySelectorAll('.posenc-explorer[data-upgraded]').length === {len(WIDGETS)}",
                           timeout=15_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    return context, page


FALLBACKS = """() => [...document.querySelectorAll('.posenc-explorer')].map((host) => {
  const figure = host.querySelector('figure.posenc-figure');
  const widget = host.querySelector('.posenc-explorer__widget');
  const shown = (e) => e !== null && getComputedStyle(e).display !== 'none' && e.getClientRects().length > 0;
  const text = [...host.children].find((e) => e.tagName === 'P');
  return {name: host.dataset.widget, figure: shown(figure) && figure.querySelectorAll('img').length === 2,
          text: shown(text || null) && text.textContent.includes('python -m posenc.inspect'), widget: shown(widget)};
})"""
# Widgets whose fallback is a paragraph (the command that does the same), not a static figure.
TEXT_FALLBACK = {"rope-inspector"}


def check_fallbacks(page: Any, check: Checker, when: str, want_widget: bool) -> None:
    """Each placeholder shows its static figure and not the widget (without scripts, in print)."""
    for host in page.evaluate(FALLBACKS):
        if host["name"] in TEXT_FALLBACK and not host["text"]:
            check.fail(f"{when}: {host['name']}", "the fallback text (the command line) is not shown")
        elif host["name"] not in TEXT_FALLBACK and not host["figure"]:
            check.fail(f"{when}: {host['name']}", "the static figure is not shown")
        if host["widget"] != want_widget:
            check.fail(f"{when}: {host['name']}", "the widget is shown" if host["widget"] else "the widget is missing")
    check.count(f"fallback checks ({when})")


def check_print(page: Any, check: Checker) -> None:
    """Printing puts the static figures back (beforeprint) and hides the widgets (print CSS)."""
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    check_fallbacks(page, check, "print", want_widget=False)
    page.emulate_media(media="screen")
    page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")
    if page.evaluate("() => document.querySelectorAll('.posenc-explorer figure, .posenc-explorer > p').length"):
        check.fail("print", "the static figures stay in the page after printing")


def check_without_scripts(browser: Any, url: str, check: Checker) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load", timeout=60_000)
    check_fallbacks(page, check, "without JavaScript", want_widget=False)
    context.close()
