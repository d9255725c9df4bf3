"""Command line: ``python -m posenc.experiments length-extrapolation --config full --output FILE``."""

from __future__ import annotations

import argparse
import sys

from posenc.experiments.length_extrapolation import (
    CONFIGS,
    RESULTS_PATH,
    run,
    summary_lines,
    write_results,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.experiments", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("length-extrapolation", help="train one tiny model per position method "
                                  "and score it at 1, 2, 4 and 8 times the training length")
    command.add_argument("--config", choices=sorted(CONFIGS), default="full")
    command.add_argument("--output", default=str(RESULTS_PATH), help="JSON file to write (default: %(default)s)")
    command.add_argument("--workers", type=int, default=2, help="parallel processes, one thread each "
                         "(the numbers do not depend on it; default: %(default)s)")
    command.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    windows = commands.add_parser("windows", help="score the trained RoPE model at 8 times its training "
                                  "length with full attention, a sliding window, and a window plus sinks")
    windows.add_argument("--config", choices=sorted(CONFIGS), default="full")
    windows.add_argument("--output", default=None, help="JSON file to write (default: the committed results)")
    vit = commands.add_parser("vit-resolution", help="train a tiny ViT per position method and seed on 8x8 "
                              "digits and score it on the test digits upsampled to larger grids")
    vit.add_argument("--config", choices=("full", "tiny"), default="full")
    vit.add_argument("--output", default=None, help="JSON file to write (default: the committed results)")
    vit.add_argument("--workers", type=int, default=2, help="parallel processes, one thread each (default: 2)")
    vit.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.command == "vit-resolution":
        from posenc.experiments import vit_resolution

        results_vit = vit_resolution.run(vit_resolution.CONFIGS[args.config], workers=args.workers,
                                         progress=not args.no_progress)
        written = vit_resolution.write_results(results_vit, args.output or vit_resolution.RESULTS_PATH)
        print("\n".join(vit_resolution.summary_lines(results_vit)))
        print(f"wrote {written} ({results_vit['wall_seconds']} s with {results_vit['workers']} workers)",
              file=sys.stderr)
        return 0
    if args.command == "windows":
        from posenc.experiments import inference_windows

        results_windows = inference_windows.run(CONFIGS[args.config])
        written = inference_windows.write_results(results_windows, args.output or inference_windows.RESULTS_PATH)
        print("\n".join(inference_windows.summary_lines(results_windows)))
        print(f"wrote {written} ({results_windows['wall_seconds']} s)", file=sys.stderr)
        return 0
    config = CONFIGS[args.config]
    results = run(config, workers=args.workers, progress=not args.no_progress)
    path = write_results(results, args.output)
    print("\n".join(summary_lines(results)))
    print(f"wrote {path} ({results['wall_seconds']} s with {results['workers']} workers)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
