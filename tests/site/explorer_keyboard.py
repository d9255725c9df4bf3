"""Every visible control of every widget moved with the keyboard: the drawing, the live readout
and the announced value must change; each update's time is kept: see ``check_explorer``'s
docstring (2).
"""

from __future__ import annotations

from typing import Any

from tests.site.explorer_page import WIDGETS
from tests.site.explorer_parity import Checker
from tests.site.explorer_rope_parity import PENDING_SCALING_TYPES, posenc_scaling_types

__all__ = ["UPDATE_BUDGET_MS", "check_keyboard", "exercise"]

# Widgets with their own check (inspector_widget.py) rather than the generic keyboard walk.
OWN_CHECK = {"rope-inspector"}
UPDATE_BUDGET_MS = 50.0

WIDGET_STATE = """(name) => {
  const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
  const svgs = [...host.querySelectorAll("svg.posenc-explorer__plot")].map((s) => s.outerHTML).join("\\n");
  const readout = host.querySelector(".posenc-explorer__readout");
  return {drawing: svgs, readout: readout ? readout.textContent : "",
          live: readout ? readout.getAttribute("aria-live") : null,
          ms: Number(host.querySelector(".posenc-explorer__widget").dataset.updateMs)};
}"""

CONTROLS = """(name) => {
  const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
  return [...host.querySelectorAll("input, select, button")].filter((e) => e.offsetParent !== null).map((e) => ({
    id: e.id, tag: e.tagName.toLowerCase(), type: e.type || "",
    label: e.labels && e.labels.length ? e.labels[0].textContent : (e.getAttribute("aria-label") || e.textContent)}));
}"""

ANNOUNCED = """(selector) => {
  const e = document.querySelector(selector);
  if (e.tagName === "SELECT") return e.options[e.selectedIndex].textContent;
  if (e.type === "checkbox") return String(e.checked);
  if (e.tagName === "BUTTON") return e.textContent + " " + (e.getAttribute("aria-pressed") || "");
  return e.getAttribute("aria-valuetext") || e.value;
}"""


def _press(page: Any, control: dict[str, Any], selector: str, forward: bool) -> None:
    if control["tag"] == "select":
        page.press(selector, "ArrowDown" if forward else "ArrowUp")
    elif control["type"] == "checkbox":
        page.press(selector, " ")
    elif control["tag"] == "button":
        page.press(selector, "Enter")
    else:
        page.press(selector, "ArrowRight" if forward else "ArrowLeft")


def _at_end(page: Any, selector: str) -> bool:
    return bool(page.evaluate("""(s) => { const e = document.querySelector(s);
      if (e.tagName === "SELECT") return e.selectedIndex === e.options.length - 1;
      if (e.type === "range") return Number(e.value) + Number(e.step) > Number(e.max);
      return false; }""", selector))


def exercise(page: Any, widget: str, control: dict[str, Any], check: Checker, times: list[float], note: str = "") -> None:
    selector = f"#{control['id']}" if control["id"] else None
    where = f"{widget}{note}: {control['label'].strip()!r}"
    if selector is None:  # a button: give it an id to address it
        selector = page.evaluate("""([name, label]) => {
          const host = document.querySelector(`.posenc-explorer[data-widget="${name}"]`);
          const button = [...host.querySelectorAll("button")].find((b) =>
            (b.getAttribute("aria-label") || b.textContent) === label);
          button.id = "posenc-explorer-check-" + Math.random().toString(36).slice(2);
          return "#" + button.id; }""", [widget, control["label"]])
    before = page.evaluate(WIDGET_STATE, widget)
    announced = page.evaluate(ANNOUNCED, selector)
    page.focus(selector)
    focused = page.evaluate("(s) => document.activeElement === document.querySelector(s)", selector)
    if not focused:
        check.fail(where, "cannot be focused")
        return
    forward = not _at_end(page, selector)
    is_play = control["tag"] == "button" and control["label"].strip() == "Play"
    after = before
    for _ in range(12):  # a small step may not move a rounded boundary: press until the drawing moves
        _press(page, control, selector, forward)
        page.wait_for_timeout(1500 if is_play else 30)
        after = page.evaluate(WIDGET_STATE, widget)
        times.append(after["ms"])
        if after["drawing"] != before["drawing"]:
            break
    if is_play:
        _press(page, control, selector, forward)  # pause again
    if after["drawing"] == before["drawing"]:
        check.fail(where, "moving it with the keyboard did not change the drawing")
    if after["readout"] == before["readout"]:
        check.fail(where, "moving it did not change the announced readout (aria-live)")
    if after["live"] not in ("polite", "assertive"):
        check.fail(where, "the readout is not an aria-live region")
    if control["tag"] != "button" and page.evaluate(ANNOUNCED, selector) == announced:
        check.fail(where, "the control's announced value did not change")
    check.count("controls moved with the keyboard")


def check_keyboard(page: Any, check: Checker) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}
    for widget in WIDGETS:
        times = timings.setdefault(widget, [page.evaluate(WIDGET_STATE, widget)["ms"]])
        if widget == "rope-scaling":
            type_select = page.evaluate(CONTROLS, widget)
            select = next(c for c in type_select if c["label"].strip() == "Scaling type")
            kinds = page.evaluate("(s) => [...document.querySelector(s).options].map((o) => o.value)", f"#{select['id']}")
            for kind in kinds:
                page.select_option(f"#{select['id']}", kind)
                for control in page.evaluate(CONTROLS, widget):
                    if control["label"].strip() != "Scaling type":
                        exercise(page, widget, control, check, times, note=f" ({kind})")
            page.select_option(f"#{select['id']}", kinds[0])
            exercise(page, widget, select, check, times)
            missing = set(posenc_scaling_types()) - set(kinds) - PENDING_SCALING_TYPES
            if missing:
                check.fail(widget, f"the scaling type list lacks {sorted(missing)}")
            continue
        if widget in OWN_CHECK:
            continue
        for control in page.evaluate(CONTROLS, widget):
            exercise(page, widget, control, check, times)
    for widget, times in timings.items():
        slow = [t for t in times[1:] if not t < UPDATE_BUDGET_MS]  # times[0]: the first drawing
        if slow:  # reported only: see the module docstring
            print(f"  note: {widget}: {len(slow)} updates took {max(slow):.1f} ms or more "
                  f"(budget {UPDATE_BUDGET_MS:.0f} ms; judged by make bench)")
    return timings
