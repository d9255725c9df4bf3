"""The notebook-page CSS pruning keeps every rule that can match and only drops impossible ones."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from css_prune import prune, prune_inline_styles  # noqa: E402

CSS = (
    "@charset \"UTF-8\";:root{--x:1}pre{margin:0}.used{color:red}.unused{color:blue}"
    ".used .unused{color:green}.used,.unused{top:0}.used:not(.unused){left:0}"
    "@media (max-width:10px){.unused{a:b}.used{c:d}}@media print{.unused{e:f}}"
    "@keyframes spin{from{rotate:0}to{rotate:1turn}}@font-face{font-family:x}"
)


def test_prune_keeps_what_can_match() -> None:
    kept = prune(CSS, {"used"})
    for rule in [":root{--x:1}", "pre{margin:0}", ".used{color:red}", ".used,.unused{top:0}",
                 ".used:not(.unused){left:0}", "@media (max-width:10px){.used{c:d}}",
                 "@keyframes spin{from{rotate:0}to{rotate:1turn}}", "@font-face{font-family:x}"]:
        assert rule in kept, rule
    for rule in [".unused{color:blue}", ".used .unused{color:green}", "@media print", ".unused{a:b}"]:
        assert rule not in kept, rule


def test_prune_inline_styles_uses_the_page_classes() -> None:
    html = '<style>.a{x:1}.b{y:2}</style><div class="a c"></div>'
    assert prune_inline_styles(html) == '<style>.a{x:1}</style><div class="a c"></div>'
