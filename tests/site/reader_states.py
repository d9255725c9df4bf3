"""More of the reader's checks of ``check_site`` (issue 32's polish): states and sizes a screenshot
misses. Like `reader_checks`, an in-page script measures and the functions below judge, so the
planted-defect pages of ``tests/site/test_reader_checks.py`` run the same judgement as the site.

* **Buttons readable in every state** (`button_problems`): each text button in the content
  (Material's ``.md-button``, the explorer's, any ``<button>`` with text) at rest, focused (as
  after a click or a tab; Material styles hover the same way) and, when it has ``aria-pressed``,
  pressed: text against its background at least `MIN_TEXT_CONTRAST` (WCAG AA for text).
  Transitions are switched off while measuring, so the colours are the state's own.
* **Bars span their box** (`bar_problems`): the summary bar of a collapsible block and the title
  bar of an admonition reach both edges of the box.
* **Code at least `MIN_CODE_PX`** (`code_size_problems`): every code element as displayed.
* **Result tables fit a desktop** (`desktop_table_problems`): at `DESKTOP` px and wider, no
  result table (``figure.posenc-table``) scrolls sideways.
* **No TeX in listings** (`listing_problems`): docstrings in code blocks show no TeX math
  (``\\( ... \\)``, ``\\[ ... \\]``); the hooks turn it into plain text in listings.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BUTTON_STATES", "IN_PAGE_STATES", "MIN_CODE_PX", "MIN_TEXT_CONTRAST", "bar_problems",
           "button_problems", "code_size_problems", "desktop_table_problems", "listing_problems", "state_problems"]

MIN_TEXT_CONTRAST = 4.5
MIN_CODE_PX = 11.0
DESKTOP = 1280  # px: from this width on, a result table fits its column

IN_PAGE_STATES = r"""() => {
  const out = {bars: [], code: [], listings: [], tables: []};
  const short = (text) => text.replace(/\s+/g, " ").trim().slice(0, 60);
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"
    && getComputedStyle(el).display !== "none";
  for (const bar of document.querySelectorAll(".md-content .md-typeset :is(details > summary, .admonition > .admonition-title)")) {
    if (!visible(bar)) continue;
    const box = bar.parentElement.getBoundingClientRect();
    const own = bar.getBoundingClientRect();
    const border = parseFloat(getComputedStyle(bar.parentElement).borderRightWidth) || 0;
    const gap = Math.round(box.right - border - own.right);
    if (gap > 2) out.bars.push({gap, width: Math.round(own.width), box: Math.round(box.width), first: short(bar.textContent)});
  }
  for (const el of document.querySelectorAll(".md-content :is(pre, code)")) {
    if (!visible(el) || el.closest(".katex") || !el.textContent.trim()) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    out.code.push({size, first: short(el.textContent)});
  }
  // docstrings in listings (Pygments' class "sd"): TeX math between \( \) or \[ \]
  for (const doc of document.querySelectorAll(".md-content pre .sd")) {
    const found = doc.textContent.match(/\\\(.*?\\\)|\\\[.*?\\\]/s);
    if (found) out.listings.push({first: short(doc.textContent), tex: found[0]});
  }
  for (const box of document.querySelectorAll(".md-content .posenc-table__scroll")) {
    if (visible(box) && box.scrollWidth > box.clientWidth + 1) {
      out.tables.push({name: box.getAttribute("aria-label") || "", hidden: box.scrollWidth - box.clientWidth});
    }
  }
  out.code.sort((a, b) => a.size - b.size);
  out.code = out.code.slice(0, 5);
  return out;
}"""

# Each text button in each of its states: (text, state, contrast). Leaves focus and state as found.
BUTTON_STATES = r"""() => {
  const parse = (c) => {
    const m = (c || "").match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255, 1]);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const contrast = (el) => {
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color) || [0, 0, 0, 1], bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    return Math.round(100 * (a + 0.05) / (b + 0.05)) / 100;
  };
  const still = document.createElement("style");
  still.textContent = "*, *::before, *::after { transition: none !important; animation: none !important; }";
  document.head.appendChild(still);
  const out = [];
  const buttons = document.querySelectorAll(".md-content :is(.md-button, button, [role='button'])");
  for (const el of buttons) {
    const text = el.textContent.replace(/\s+/g, " ").trim();
    if (!text || el.getClientRects().length === 0 || getComputedStyle(el).visibility === "hidden") continue;
    const pressed = el.getAttribute("aria-pressed");
    out.push({text, state: "rest", contrast: contrast(el)});
    el.focus({preventScroll: true});
    out.push({text, state: "focused", contrast: contrast(el)});
    if (pressed !== null) {
      el.setAttribute("aria-pressed", "true");
      out.push({text, state: "pressed", contrast: contrast(el)});
      el.setAttribute("aria-pressed", pressed);
    }
    el.blur();
  }
  still.remove();
  return out;
}"""


def button_problems(states: list[dict[str, Any]], width: int) -> list[str]:
    """Buttons whose text is under `MIN_TEXT_CONTRAST` against their background in some state."""
    return [f"button {s['text']!r} at {width} px, {s['state']}: text contrast {s['contrast']}:1 "
            f"(at least {MIN_TEXT_CONTRAST}:1)" for s in states if s["contrast"] < MIN_TEXT_CONTRAST]


def bar_problems(bars: list[dict[str, Any]], width: int) -> list[str]:
    return [f"bar {b['first']!r} at {width} px stops {b['gap']} px short of its box's edge "
            f"({b['width']} of {b['box']} px)" for b in bars]


def code_size_problems(code: list[dict[str, Any]], width: int) -> list[str]:
    return [f"code at {width} px is {c['size']:.1f} px (at least {MIN_CODE_PX:.0f}): {c['first']!r}"
            for c in code if c["size"] < MIN_CODE_PX - 0.05]


def desktop_table_problems(tables: list[dict[str, Any]], width: int) -> list[str]:
    """Result tables that scroll sideways on a desktop (phones get cards or a tightened table)."""
    if width < DESKTOP:
        return []
    return [f"table {t['name']!r} at {width} px hides {t['hidden']} px behind a sideways scroll" for t in tables]


def listing_problems(listings: list[dict[str, Any]]) -> list[str]:
    return [f"code block shows TeX ({l['tex']!r}): {l['first']!r}" for l in listings]


def state_problems(found: dict[str, Any], width: int) -> list[tuple[str, str]]:
    """(check, line) for every problem in `IN_PAGE_STATES`'s measurements at ``width`` px."""
    problems = [("bar width", line) for line in bar_problems(found["bars"], width)]
    problems += [("code size", line) for line in code_size_problems(found["code"], width)]
    problems += [("TeX in code", line) for line in listing_problems(found["listings"])]
    problems += [("table scrolls", line) for line in desktop_table_problems(found["tables"], width)]
    return problems
