"""The numbers behind the inspector's design (issue 31 item 4): its JavaScript port against posenc's
own reader run in the page by Pyodide, in headless Chromium. A measurement, not a test: nothing
here fails the build, and the site ships no Pyodide.

    npm pack pyodide@314.0.7 && tar xzf pyodide-314.0.7.tgz     # the npm registry only, into any folder
    python -m tests.site.check_inspector_pyodide --site-dir SITE --pyodide package [--runs 3]

For each run, in a fresh browser context, both ways of reading a config:

* **the port**: the Explore page of a built site (``--site-dir``), scrolled to the inspector; the
  time from the scroll to its first reading, and the bytes of the files that the inspector loads;
* **Pyodide**: a page that loads Pyodide from ``--pyodide`` (the npm package, served from the same
  origin), writes the torch-free reader (posenc/configs and the three modules it imports) into its
  file system and reads one zoo config; the same times and bytes.

Then, once, parity: the cases of ``check_inspector.api_cases`` read by ``read_config`` and
``from_config`` (and the attention factor of each rotating layer) in Pyodide and here, compared by
``check_inspector``'s rules (values; for a refusal, the kind of error). The frequencies and the
warnings are left out: they still compute with torch, which Pyodide does not have.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.site.check_inspector import ROOT, api_cases, compare, kinds
from tests.site.site_browser import _launch
from tests.site.site_pages import base_path, serve

READER = ["posenc/__init__.py", "posenc/_checks.py", "posenc/_scaling_rules.py", "posenc/rope_scaling.py",
          *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "posenc" / "configs").glob("*.py"))),
          "posenc/configs/model_types.json"]
HOST = ".posenc-explorer[data-widget='rope-inspector']"
INSPECTOR = f"{HOST} .posenc-explorer__widget"

# Python run in both interpreters: one config's reading, or a refusal as "Class: message".
READING = '''
import dataclasses, json

def _plain(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value

def reading(text, layout):
    from posenc.configs import from_config, read_config
    from posenc.rope_scaling import rope_attention_scaling
    try:
        try:
            config = json.loads(text)
        except RecursionError:
            return {"ok": False, "error": "ValueError: nested too deeply"}
        rope = read_config(config, layout=layout)
        layers = {}
        for name, layer in rope.layers.items():
            if layer.rotates:
                kwargs = from_config(config, name, layout=layout)
                layers[name] = {"kwargs": _plain(kwargs), "attention_factor": rope_attention_scaling(kwargs["scaling"])}
        return {"ok": True, "value": {"rope": _plain(rope), "layers": layers}}
    except (ValueError, TypeError, OverflowError) as error:
        name = "ValueError" if isinstance(error, json.JSONDecodeError) else type(error).__name__
        return {"ok": False, "error": f"{name}: {error}"}

def run_all(cases):
    return json.dumps([reading(text, layout) for text, layout, _ in json.loads(cases)], default=repr)
'''

PAGE = """<!doctype html><meta charset="utf-8"><title>posenc's reader under Pyodide</title><script>
window.start = async function () {
  const t0 = performance.now();
  await new Promise((ok, no) => { const s = document.createElement("script"); s.src = "pyodide/pyodide.js";
                                  s.onload = ok; s.onerror = no; document.head.append(s); });
  const py = await loadPyodide({ indexURL: new URL("pyodide/", location.href).href });
  const files = await (await fetch("reader.json")).json();
  await Promise.all(files.map(async (path) => {
    py.FS.mkdirTree("/home/pyodide/" + path.split("/").slice(0, -1).join("/"));
    py.FS.writeFile("/home/pyodide/" + path, await (await fetch("src/" + path)).text());
  }));
  py.runPython(await (await fetch("reading.py")).text());
  py.globals.set("FIRST", JSON.stringify([[await (await fetch("first.json")).text(), null, null]]));
  window.first = String(py.runPython("run_all(FIRST)"));
  window.firstMs = performance.now() - t0;
  window.py = py;
};
</script>"""


def _bytes(urls: list[str], root: Path, origin: str, base: str = "/") -> int:
    total = 0
    for url in urls:
        path = root / url[len(origin) + len(base):].split("?")[0].split("#")[0]
        path = path / "index.html" if path.is_dir() else path
        total += path.stat().st_size if path.is_file() else 0
    return total


def port_run(browser: Any, site_dir: Path) -> dict[str, float]:
    base = base_path(site_dir)
    with serve(site_dir, base) as origin:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        urls: list[str] = []
        page.on("requestfinished", lambda request: urls.append(request.url))
        page.goto(f"{origin}{base}explore/", wait_until="networkidle")  # the first view, all of it (a busy
        page.wait_for_timeout(500)                                       # machine loads it late)
        first_view = list(urls)
        started = time.perf_counter()
        page.locator(HOST).scroll_into_view_if_needed()
        page.wait_for_function(f"() => document.querySelector(\"{INSPECTOR}\")?.posencInspector?.result", timeout=300000)
        seconds = time.perf_counter() - started
        page.wait_for_timeout(300)
        context.close()
    return {"first_view_bytes": _bytes(first_view, site_dir, origin, base), "seconds": seconds,
            "bytes": _bytes([u for u in urls if u not in first_view], site_dir, origin, base)}


def pyodide_run(browser: Any, folder: Path, parity: bool) -> dict[str, Any]:
    with serve(folder) as origin:
        context = browser.new_context()
        page = context.new_page()
        urls: list[str] = []
        page.on("requestfinished", lambda request: urls.append(request.url))
        page.goto(f"{origin}/index.html", wait_until="load")
        before = list(urls)
        started = time.perf_counter()
        page.evaluate("() => { window.start(); }")
        page.wait_for_function("() => window.first", timeout=600000, polling=50)
        result: dict[str, Any] = {"seconds": time.perf_counter() - started,
                                  "bytes": _bytes([u for u in urls if u not in before], folder, origin)}
        if parity:
            cases = json.dumps([list(case) for case in api_cases()[0]])
            result["readings"] = json.loads(page.evaluate("(cases) => { window.py.globals.set('CASES', cases); "
                                                          "return String(window.py.runPython('run_all(CASES)')); }", cases))
        context.close()
    return result


def prepare(pyodide: Path, folder: Path) -> None:
    (folder / "pyodide").symlink_to(pyodide.resolve(), target_is_directory=True)
    for name in READER:
        (folder / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "src" / name).write_bytes((ROOT / name).read_bytes())
    (folder / "reader.json").write_text(json.dumps(READER))
    (folder / "reading.py").write_text(READING)
    (folder / "first.json").write_text((ROOT / "posenc" / "zoo" / "llama-3.1-8b.json").read_text())
    (folder / "index.html").write_text(PAGE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, required=True)
    parser.add_argument("--pyodide", type=Path, required=True, help="the unpacked npm package (its package/ folder)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not (args.pyodide / "pyodide.asm.wasm").is_file():
        print(f"{args.pyodide}/pyodide.asm.wasm is missing: npm pack pyodide@314.0.7 and unpack it", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    namespace: dict[str, Any] = {}
    exec(READING, namespace)  # the same reading, here
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        prepare(args.pyodide, folder)
        browser = _launch(playwright)
        port, pyo = [], []
        for run in range(args.runs):  # alternated, so that both meet the same load of the machine
            port.append(port_run(browser, args.site_dir))
            pyo.append(pyodide_run(browser, folder, parity=run == 0))
            print(f"run {run + 1}: port {port[-1]['seconds']:.2f} s, Pyodide {pyo[-1]['seconds']:.2f} s "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        browser.close()
    cases = api_cases()[0]
    here = json.loads(namespace["run_all"](json.dumps([list(case) for case in cases])))
    alike = sum(not compare(kinds(theirs), kinds(ours)) for ours, theirs in zip(pyo[0]["readings"], here))
    words = sum(ours == theirs for ours, theirs in zip(pyo[0]["readings"], here))
    print(f"first view of the Explore page: {port[0]['first_view_bytes'] / 1e6:.2f} MB (either way: both load on use)")
    print(f"bytes on first use: port {port[0]['bytes'] / 1e6:.2f} MB, Pyodide {pyo[0]['bytes'] / 1e6:.2f} MB")
    print(f"time to first result, median of {args.runs}: port {statistics.median(r['seconds'] for r in port):.2f} s, "
          f"Pyodide {statistics.median(r['seconds'] for r in pyo):.2f} s")
    print(f"parity of Pyodide with this Python ({sys.version.split()[0]}): {alike} of {len(cases)} configs read alike, "
          f"{words} with the same words")
    for ours, theirs, case in zip(pyo[0]["readings"], here, cases):
        if compare(kinds(theirs), kinds(ours)):
            print(f"  differs: {case[0][:60]!r}: Pyodide {str(ours)[:120]}; here {str(theirs)[:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
