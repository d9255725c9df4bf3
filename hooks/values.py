"""Numbers from the committed results in prose, and hidden checks of what the prose claims.

* ``[[value EXPR | FORMAT]]`` becomes a number computed at build time from the committed results
  files (or from posenc), with the rounding the format states: ``[[value lm.rope@8L | .2f]]``
  gives "23.08", ``[[value lm.fire@8L / @L | range .2f]]`` gives "1.19 to 1.25".
* ``<!-- check: lower(lm.kerple@8L, lm.rope@8L); tied(recall.t5@8L, recall.kerple@8L) -->``
  renders nothing and fails the build when the results no longer support a claim (the
  chapters' seed-spread rule: ranges over seeds that do not overlap are a difference).

The vocabulary (references, formats, claims) is `posenc.experiments.claims`'s; this module only
finds the macros in a page. A failure is a `ValueError` naming the page and the macro.
"""

from __future__ import annotations

import re

__all__ = ["CHECK", "VALUE", "expand_values"]

VALUE = re.compile(r"\[\[value\s+(?P<expression>[^|]+?)\s*\|\s*(?P<fmt>[^|\]]+?)\s*\]\]")
# a check on a line of its own goes with its line, so that it cannot split a paragraph in two
CHECK = re.compile(r"^[ \t]*<!--\s*check:(?P<line>(?:(?!-->).)*)-->[ \t]*\n|<!--\s*check:(?P<inline>(?:(?!-->).)*)-->",
                   re.DOTALL | re.MULTILINE)


def expand_values(markdown: str, page_src: str = "") -> str:
    """Render every ``[[value ...]]`` of ``markdown``, run and remove every ``<!-- check: ... -->``.

    >>> print(expand_values("RoPE at 8L: [[value lm.rope@8L | .2f]].\\n<!-- check: lower(lm.kerple@8L, lm.rope@8L) -->\\nNext."))
    RoPE at 8L: 23.08.
    Next.
    """
    from posenc.experiments.claims import ClaimError, checks, value

    def render(match: re.Match[str]) -> str:
        try:
            return str(value(match["expression"], match["fmt"]))
        except (ClaimError, ArithmeticError) as error:
            raise ValueError(f"{page_src}: {match[0]}: {error}") from error

    def run(match: re.Match[str]) -> str:
        try:
            checks(match["line"] if match["line"] is not None else match["inline"])
        except (ClaimError, ArithmeticError) as error:
            raise ValueError(f"{page_src}: a claim check fails: {error}") from error
        return ""

    if "[[value" in markdown:
        markdown = VALUE.sub(render, markdown)
    return CHECK.sub(run, markdown) if "check:" in markdown else markdown
