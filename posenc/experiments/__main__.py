"""Command line: ``python -m posenc.experiments STUDY --config full [--output FILE] [--device cuda] [--methods ...]``.

Studies: ``length-extrapolation`` (language modelling), ``retrieval`` (MQAR), ``extension``
(RoPE scaling rules, without and with a short fine-tune), ``windows`` (sliding windows and
attention sinks), ``vit-resolution`` (2-D positions), ``training-free`` (re-mapped relative
positions on the RoPE models), ``rope-base`` (the base against the context), ``depth`` (MQAR
by where the facts sit), ``hybrid-lm`` and ``hybrid-retrieval`` (today's layer patterns, four
layers deep), ``inside-lm`` and ``inside-retrieval`` (position inside attention, four layers
deep). Each writes its JSON results file and prints the CPU time it took. ``--methods`` runs a
subset of the configuration's methods (its results say which).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import resource
import sys

from posenc.experiments._results import large_path, write_json

#: Each study: its module, a one-line description, and the configurations it accepts.
STUDIES = {
    "length-extrapolation": ("length_extrapolation", "train one language model per position method and seed "
                             "and score it at 1, 2, 4 and 8 times the training length"),
    "retrieval": ("retrieval", "train one MQAR model per position method and seed and test its recall at 1, 2, "
                  "4 and 8 times the training length"),
    "extension": ("context_extension", "apply each RoPE scaling rule to the trained RoPE models, without "
                  "training and after a short fine-tune"),
    "windows": ("inference_windows", "score every trained language model at 8 times its training length with "
                "full attention, a sliding window, and a window plus sinks"),
    "vit-resolution": ("vit_resolution", "train a tiny ViT per position method and seed on 8x8 digits and score "
                       "it on the test digits upsampled to larger grids"),
    "vit-images": ("vit_images", "the digits ViT with the schemes of image and video models (RoPE-Mixed, DINOv3's "
                   "coordinates, per-axis NTK, RIFLEx), three seeds, scored on larger grids"),
    "training-free": ("training_free", "score the trained RoPE models with ReRoPE, Self-Extend, Dual Chunk "
                      "Attention and STRING at 1, 2, 4 and 8 times the training length"),
    "rope-base": ("base_context", "train RoPE models with bases from 50 to 10^6 and score them on MQAR by "
                  "distance and on text, next to the base's lower bound"),
    "depth": ("depth", "score every MQAR model with the key-value pairs at the start, middle or end, at 1, 2, 4 "
              "and 8 times the training length"),
    "hybrid-lm": ("hybrid", "train four-layer language models of today's hybrid designs (RNoPE-SWA, iRoPE, RoPE "
                  "with sinks) and of RoPE, NoPE and ALiBi, and score them at 1, 2, 4 and 8 times L"),
    "hybrid-retrieval": ("hybrid", "the same designs trained on MQAR and tested at 1, 2, 4 and 8 times L"),
    "inside-lm": ("inside", "train four-layer language models with FoX, FoX with RoPE, stick-breaking, PaTH and "
                  "PoPE in the hybrid study's protocol, and score them at 1, 2, 4 and 8 times L"),
    "inside-retrieval": ("inside", "the same methods trained on MQAR, tested at 1, 2, 4 and 8 times L and with "
                         "the pairs at the start, middle or end"),
}
#: Studies that run one task of their module: the task their ``run`` takes (its file: ``RESULTS_PATHS[task]``).
TASK_OF = {"hybrid-lm": "lm", "hybrid-retrieval": "retrieval", "inside-lm": "lm", "inside-retrieval": "retrieval"}


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes (the budget of a make target)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.experiments", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, description) in STUDIES.items():
        command = commands.add_parser(name, help=description)
        configs = ("full", "tiny") if name.startswith("vit-") else ("full", "large", "tiny")
        command.add_argument("--config", choices=configs, default="full")
        command.add_argument("--output", default=None, help="JSON file to write (default: the committed results)")
        command.add_argument("--workers", type=int, default=2, help="parallel processes, one thread each "
                             "(the numbers do not depend on it; default: %(default)s)")
        if name != "vit-resolution":
            command.add_argument("--device", default="cpu", help="cpu (default) or cuda")
        command.add_argument("--no-progress", action="store_true", help="hide the progress bars")
        command.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                             help="run only these of the configuration's methods (default: all of them)")
    args = parser.parse_args(argv)
    module = importlib.import_module(f"posenc.experiments.{STUDIES[args.command][0]}")
    options = {"workers": args.workers, "progress": not args.no_progress}
    if args.command != "vit-resolution":
        options["device"] = args.device
    task = TASK_OF.get(args.command)
    if task is not None:
        options["task"] = task
    config = module.CONFIGS[args.config]
    if args.methods is not None:
        unknown = [name for name in args.methods if name not in config.methods]
        if unknown:
            parser.error(f"--methods {' '.join(unknown)}: not a method of the {args.config!r} configuration "
                         f"of {args.command} (its methods: {', '.join(config.methods)})")
        config = dataclasses.replace(config, methods=tuple(dict.fromkeys(args.methods)))
    cpu = _cpu_seconds()
    results = module.run(config, **options)
    cpu = _cpu_seconds() - cpu
    # the larger (GPU) configuration has its own committed files
    path = module.RESULTS_PATH if task is None else module.RESULTS_PATHS[task]
    default = large_path(path) if args.config == "large" else path
    written = write_json(results, args.output or default)
    print("\n".join(module.summary_lines(results)))
    print(f"wrote {written} ({results['wall_seconds']} s with {results['workers']} workers; {cpu:.0f} s of CPU "
          f"time, this process and its workers)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
