"""Command line: ``python -m posenc.experiments length-extrapolation --config full --output FILE``."""

from __future__ import annotations

import argparse
import sys

from posenc.experiments.length_extrapolation import CONFIGS, RESULTS_PATH, run, summary_lines, write_results


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
    args = parser.parse_args(argv)
    config = CONFIGS[args.config]
    results = run(config, workers=args.workers, progress=not args.no_progress)
    path = write_results(results, args.output)
    print("\n".join(summary_lines(results)))
    print(f"wrote {path} ({results['wall_seconds']} s with {results['workers']} workers)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
