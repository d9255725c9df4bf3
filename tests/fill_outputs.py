"""Rewrite the expected output of every ``>>>`` example in a Markdown page by running it.

    .venv/bin/python -m tests.fill_outputs docs/some-page.md [more pages]

Authors write the code of a doctest block and let this tool print what it prints, so no output
is ever typed by hand. The tests (Sybil) then check that the page and the code keep agreeing.
Review the diff after running it: a changed number is a changed claim.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from tests.doc_examples import INFO, PYTHON_LANGUAGES

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                   re.MULTILINE | re.DOTALL)


def _run(source: str, namespace: dict[str, Any]) -> str:
    """Run one example as the interactive interpreter would, returning what it prints."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            code = compile(source, "<example>", "single")
            exec(code, namespace)
        except Exception as error:  # noqa: BLE001 - shown as a doctest traceback
            frames = traceback.format_exception_only(type(error), error)
            # Loud on purpose: an error recorded as "expected output" makes a broken example pass.
            print(f"NOTE: this example raised {type(error).__name__}; check that the page means to show it:\n"
                  f"    {source.strip().splitlines()[0]}\n    {frames[-1].strip()}", file=sys.__stderr__)
            return "Traceback (most recent call last):\n    ...\n" + "".join(frames)
    return buffer.getvalue()


def _prompts(text: str) -> list[list[str]]:
    """The block's examples, each its ``>>>`` line and ``...`` lines (its old output dropped)."""
    examples: list[list[str]] = []
    in_source = False
    for line in text.splitlines():
        if line.startswith(">>>"):
            examples.append([line])
            in_source = True
        elif in_source and line.startswith("..."):
            examples[-1].append(line)
        else:
            in_source = False  # output, until the next prompt; "..." here is output too
    return examples


def _fill_block(body: str, indent: str, namespace: dict[str, Any]) -> str:
    text = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in body.splitlines())
    parts = []
    for lines in _prompts(text):
        source = "\n".join(line[4:] for line in lines) + "\n"
        # A prompt that holds only a comment is not an example (doctest skips it): kept as written.
        if not source.strip() or source.strip().startswith("#") and len(lines) == 1:
            parts.append(lines[0].rstrip())
            continue
        shown = [line.rstrip() for line in lines]
        output = _run(source, namespace).rstrip("\n")
        parts.append("\n".join(shown + ([output] if output else [])))
    return "".join(indent + line + "\n" if line else "\n" for line in "\n".join(parts).splitlines())


def fill(path: Path) -> None:
    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    text = path.read_text()

    def replace(match: re.Match[str]) -> str:
        info, body, indent = match["info"], match["body"], match["indent"]
        if not INFO.match(info + "\n"):
            return match.group(0)
        source = "\n".join(line[len(indent):] for line in body.splitlines())
        if source.lstrip().startswith(">>>"):
            body = _fill_block(body, indent, namespace)
        elif "--8<--" not in source:
            exec(compile(source, str(path), "exec"), namespace)
        return f"{indent}{match['fence']}{info}\n{body}{indent}{match['fence']}"

    path.write_text(FENCE.sub(replace, text))
    torch.set_printoptions(profile="default")


if __name__ == "__main__":
    assert PYTHON_LANGUAGES
    for name in sys.argv[1:]:
        fill(Path(name))
        print(f"filled {name}")
