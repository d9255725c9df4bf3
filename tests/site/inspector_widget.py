"""The config inspector widget of the Explore page against posenc, in Chromium (run by
check_explorer.py): every zoo entry from its menu, each bad input typed into it (one message,
the kind of error posenc raises, and the last good result kept), its keyboard use, the links of its findings, and its
screenshots. What "the same" means: see ``check_inspector``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
from pathlib import Path
from typing import Any

from posenc.configs.vision import ENCODER_MODEL_TYPES, read_vision_config
from tests.site.check_inspector import (
    BAD_INPUTS,
    ROOT,
    ZOO,
    _report,
    error_kind,
    posenc_reading,
)

__all__ = ["WIDGET", "check_widget", "screenshots", "timing_line"]

WIDGET = ".posenc-explorer[data-widget='rope-inspector']"

WIDGET_STATE = """() => {
  const root = document.querySelector("%s .posenc-explorer__widget");
  const state = root.posencInspector;
  const r = state.result;
  const problem = root.querySelector(".posenc-inspector__problem");
  return JSON.stringify({
    error: state.error && `${state.errorName}: ${state.error}`, problem: problem.hidden ? null : problem.textContent, ms: Number(root.dataset.updateMs),
    readout: root.querySelector(".posenc-explorer__readout").textContent,
    drawing: [...root.querySelectorAll("svg.posenc-explorer__plot")].map((s) => s.outerHTML).join(""),
    results: root.querySelector(".posenc-inspector__results").innerHTML,
    value: r && {rope: r.rope, warnings: r.warnings, engines: r.engines.warnings.map((w) => w.text), layers: Object.fromEntries(Object.entries(r.layers).map(([n, l]) =>
      [n, {kwargs: l.kwargs, theta: l.theta, attention_factor: l.attention_factor}]))},
    links: [...root.querySelectorAll(".posenc-inspector__findings a")].map((a) => a.getAttribute("href")),
    vision: r && r.vision,
  }, (k, v) => (typeof v === "bigint" ? Number(v) : v));
}""" % WIDGET


def _widget(page: Any) -> dict[str, Any]:
    return dict(json.loads(page.evaluate(WIDGET_STATE)))


def _settle(page: Any) -> None:
    page.wait_for_timeout(420)  # the text area and the length field update 300 ms after the last key
    # ... and on a busy machine later: wait until the widget has read what the fields now hold
    page.wait_for_function("""() => { const root = document.querySelector("%s .posenc-explorer__widget");
      const [area, menus, length] = [root.querySelector("textarea"), root.querySelectorAll("select"),
                                     root.querySelector("input[type=text]")];
      return root.posencInspector.source === area.value + menus[1].value + length.value; }""" % WIDGET, timeout=20000)


def _layout_words(message: str) -> str:
    """read_config's message as the widget shows it: a missing layout is asked for in the Layout menu."""
    return re.sub(r"; pass layout='half' \((.*)\) or layout='interleaved' \((.*)\)$",
                  r": choose half (\1) or interleaved (\2) in the Layout menu above", message)


def _compare_widget(check: Any, where: str, state: dict[str, Any], theirs: dict[str, Any]) -> None:
    if not theirs["ok"]:
        if state["error"] is None or error_kind(state["error"]) != error_kind(theirs["error"]):
            check.fail(where, f"the widget says {state['problem']!r:.160}, posenc {theirs['error']!r:.160}")
        return
    if state["error"] is not None:
        check.fail(where, f"the widget refused what posenc reads: {state['error']!r:.160}")
        return
    expected = {key: theirs["value"][key] for key in ("rope", "warnings", "engines", "layers")}
    _report(check, where, state["value"], expected)


def check_widget(page: Any, check: Any, site_dir: Path) -> list[float]:
    """The inspector widget: every zoo entry from its menu (and with a layout and a length where
    posenc needs or uses one), each bad input typed into it, the keyboard, and the findings' links."""
    host = page.locator(WIDGET)
    host.scroll_into_view_if_needed()
    select, layout, length, textarea = (host.locator(s) for s in ("select >> nth=0", "select >> nth=1",
                                                                   "input[type=text]", "textarea"))
    times = [_widget(page)["ms"]]
    slowest_256: list[float] = []
    links: set[str] = set()
    for path in ZOO:
        entry = json.loads(path.read_text())
        name = entry.get("_name", path.stem)
        select.select_option(name)
        state = _widget(page)
        times.append(state["ms"])
        # chosen from the menu, a file with _read_as is read as that model type, as the models table reads it
        text = json.dumps({**entry, "model_type": entry["_read_as"]}) if "_read_as" in entry else path.read_text()
        theirs = posenc_reading(text, None, None, widget=True)
        _compare_widget(check, f"inspector: {name}", state, theirs)
        if "_read_as" in entry and f"(read as {entry['_read_as']}," not in state["readout"]:
            check.fail(f"inspector: {name}", f"the summary does not say it is read as {entry['_read_as']}")
        _check_rule_reach(check, name, text, state)
        links.update(state["links"])
        if state["value"] and any(layer["kwargs"]["dim"] == 256 for layer in state["value"]["layers"].values()):
            slowest_256.append(state["ms"])
        if not theirs["ok"] and "layout is needed" in theirs["error"]:
            layout.select_option("half")
            _compare_widget(check, f"inspector: {name} (layout half)", _widget(page), posenc_reading(path.read_text(), "half", None, True))
            layout.select_option("")
        check.count("zoo configs read by the inspector")
    for name, value in (("phi-3.5-mini-instruct", "300000"), ("gemma-2-9b", "5000"), ("qwen3-1.7b-yarn", "40000")):
        select.select_option(name)
        length.fill(value)
        _settle(page)
        state = _widget(page)
        times.append(state["ms"])
        _compare_widget(check, f"inspector: {name} at length {value}", state,
                        posenc_reading((ROOT / "posenc" / "zoo" / f"{name}.json").read_text(), None, int(value), True))
        length.fill("")
        _settle(page)
    # each kind of bad input: one message, of posenc's kind of error, and the last good result stays
    select.select_option("gemma-2-9b")
    good = _widget(page)
    for kind, text, named in [*BAD_INPUTS, ("length 0", "", "length must be an integer >= 1")]:
        if kind == "length 0":  # the length first: no good reading in between, however slow the machine
            length.fill("0")
            textarea.fill((ROOT / "posenc" / "zoo" / "gemma-2-9b.json").read_text())
        else:
            textarea.fill(text)
        _settle(page)
        state = _widget(page)
        named = named.split("|")[-1]
        expected = "ValueError: length must be an integer >= 1, got 0" if kind == "length 0" else \
            posenc_reading(text, None, None, widget=True).get("error", "")
        shown = state["error"] is not None and state["problem"] is not None and \
            _layout_words(state["error"].split(": ", 1)[1]) in state["problem"]
        if not shown or error_kind(state["error"]) != error_kind(expected) or named not in expected:
            check.fail(f"inspector, bad input: {kind}", f"shows {state['problem']!r:.200}; posenc says {expected!r:.200}")
        if state["results"] != good["results"] or state["readout"] != good["readout"]:
            check.fail(f"inspector, bad input: {kind}", "the last good result did not stay in place")
        check.count("bad inputs refused by the inspector")
        length.fill("")
    # vision encoders (read_config refuses them): read_vision_config's reading, shown; a parent keeps its text reading
    for config in ({"model_type": "dinov3_vit", "hidden_size": 384, "num_attention_heads": 6}, {"model_type": "sam3"},
                   {"model_type": "qwen2_5_vl", "hidden_size": 64, "num_attention_heads": 4}, {"model_type": "glm46v"}):
        _check_vision(page, check, textarea, config)
    _check_links(check, site_dir, links)
    _check_keyboard(page, check, host, times)
    if slowest_256:
        print(f"  inspector, 256-wide heads: {len(slowest_256)} updates, max {max(slowest_256):.1f} ms (budget 50 ms)")
    return times


def _check_rule_reach(check: Any, name: str, text: str, state: dict[str, Any]) -> None:
    """A config whose scaling rule reaches past its declared context (Qwen2.5-7B's YaRN file: 4 x 32,768
    against 32,768) names that length in the summary and draws it as a chart line, as posenc.inspect
    compares it (posenc._zoo_rows._longest, the models table's context); no such line elsewhere."""
    from posenc._zoo_rows import _longest
    from posenc.configs import read_config

    try:
        rope = read_config(json.loads(text))
    except (TypeError, ValueError):
        return  # refused: compared as a refusal above
    longest = _longest(rope)
    declared = rope.max_position_embeddings or 0
    reach = longest if longest and longest > declared else None
    drawn = re.findall(r"rule's ([\d,]+)</text>", state["drawing"])
    said = re.findall(r"reached by the scaling rule ([\d,]+)", state["readout"])
    expected = [] if reach is None else [f"{reach:,}"]
    if sorted(set(drawn)) != expected or said != expected:
        check.fail(f"inspector: {name}", f"the rule's length {reach}: drawn {drawn}, said {said}")
    check.count("inspector readings checked for the length the rule reaches")


def _check_vision(page: Any, check: Any, textarea: Any, config: dict[str, Any]) -> None:
    textarea.fill(json.dumps(config))
    _settle(page)
    state, where = _widget(page), f"inspector: vision {config['model_type']}"
    expected = json.loads(json.dumps(dataclasses.asdict(read_vision_config(config))))
    if state["error"] is not None or state["vision"] is None:
        check.fail(where, f"not read: {state['problem']!r:.200}")
        return
    _report(check, where, state["vision"], expected)
    text = posenc_reading(json.dumps(config), None, None, True)  # a parent's language model: read alike, or its refusal shown
    if config["model_type"] not in ENCODER_MODEL_TYPES and text["ok"]:
        _compare_widget(check, where, state, text)
    elif config["model_type"] not in ENCODER_MODEL_TYPES and "Its language model is not read" not in state["results"]:
        check.fail(where, f"the language model's refusal is not shown: {text['error']!r:.160}")
    if "posenc-inspector__vision" not in state["results"]:
        check.fail(where, "no vision section in the results")
    check.count("vision readings shown by the inspector")


def _check_links(check: Any, site_dir: Path, links: set[str]) -> None:
    """Every "Read more" link of a finding leads to a page of the site and a heading on it."""
    for href in sorted(links):
        page, _, anchor = href.partition("#")
        target = (site_dir / "explore" / page / "index.html").resolve()
        if not target.is_file():
            check.fail("inspector link", f"{href}: no page {target}")
        elif f'id="{anchor}"' not in target.read_text(encoding="utf-8"):
            check.fail("inspector link", f"{href}: no id {anchor!r} on the page")
        check.count("inspector links checked")


def _check_keyboard(page: Any, check: Any, host: Any, times: list[float]) -> None:
    """Tab reaches every control; the menus move with the arrow keys, the text fields take typing."""
    select = host.locator("select >> nth=0")
    select.select_option("llama-3.1-8b")
    before = _widget(page)
    # the layout menu: "half" is what llama already uses, "interleaved" is refused (posenc's message)
    for selector, keys in (("select >> nth=0", ["ArrowDown"]), ("select >> nth=1", ["ArrowDown", "ArrowDown"]),
                           ("select >> nth=1", ["ArrowUp", "ArrowUp"]), ("input[type=text]", list("20000")),
                           ("textarea", ["Control+End", "Backspace"])):
        control = host.locator(selector)
        control.focus()
        if not control.evaluate("(e) => document.activeElement === e"):
            check.fail(f"inspector keyboard: {selector}", "cannot be focused")
            continue
        for key in keys:
            page.keyboard.press(key)
        _settle(page)
        after = _widget(page)
        times.append(after["ms"])
        changed = after["readout"] != before["readout"] or after["problem"] != before["problem"] or after["drawing"] != before["drawing"]
        if not changed:
            check.fail(f"inspector keyboard: {selector}", "pressing keys changed neither the drawing nor the message")
        before = after
        check.count("inspector controls used with the keyboard")
    file_input = host.locator("input[type=file]")
    file_input.focus()
    if not file_input.evaluate("(e) => document.activeElement === e"):
        check.fail("inspector keyboard: file picker", "cannot be focused")
    path = ROOT / "posenc" / "zoo" / "qwen3-1.7b-yarn.json"
    file_input.set_input_files(files=[{"name": "config.json", "mimeType": "application/json",
                                       "buffer": path.read_text().replace("\n", "\r\n").encode()}])
    _settle(page)
    state = _widget(page)
    _compare_widget(check, "inspector: an opened file (CRLF lines)", state, posenc_reading(path.read_text(), None, None, True))
    live = page.evaluate(f"() => document.querySelector(\"{WIDGET} .posenc-explorer__readout\").getAttribute('aria-live')")
    if live != "polite" or "config.json" not in state["readout"]:
        check.fail("inspector readout", f"aria-live {live!r}, readout {state['readout']!r:.120}")


def timing_line(times: list[float]) -> str:
    updates = times[1:] or [0.0]
    return (f"  {'rope-inspector':<14} first drawing {times[0]:5.1f} ms; {len(times) - 1:3} keyboard updates: median "
            f"{statistics.median(updates):5.1f} ms, max {max(updates):5.1f} ms (budget 50 ms)")


def screenshots(browser: Any, url: str, origin: str, check: Any, folder: Path, open_page: Any) -> None:
    """The inspector alone at 1280 and 390 px, light and dark, the page header hidden; at 390 px light
    also with Qwen2.5-7B's YaRN file chosen (its rule's length in the summary and the chart)."""
    for width, scheme in ((1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")):
        context, page = open_page(browser, url, origin, check, width, scheme)
        page.add_style_tag(content=".md-header, .md-tabs { visibility: hidden; }")
        page.locator(WIDGET).screenshot(path=str(folder / f"inspector-{width}px-{scheme}.png"), animations="disabled")
        if (width, scheme) == (390, "light"):  # a file whose rule reaches past its declared context (review5 X6)
            page.locator(WIDGET).locator("select >> nth=0").select_option("qwen2.5-7b-instruct-yarn")
            page.locator(WIDGET).screenshot(path=str(folder / "inspector-qwen2.5-yarn-390px-light.png"),
                                            animations="disabled")
        context.close()
