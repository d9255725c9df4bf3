"""References into the committed results files: the numbers a page's claims and values are made
of (the vocabulary is documented in `posenc.experiments.claims`).

Private: `posenc.experiments._measures` gives these (``ClaimError``, ``Measure``, ``measure``) with
the expressions that combine them; import them from there.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
FILES = {"lm": "length_extrapolation.json", "recall": "retrieval.json", "ext": "context_extension.json",
         "windows": "inference_windows.json", "vit": "vit_resolution.json", "vimg": "vit_images.json", "free": "training_free.json",
         "base": "base_context.json", "depth": "depth.json", "hlm": "hybrid_lm.json",
         "hrecall": "hybrid_retrieval.json", "ilm": "inside_lm.json", "irecall": "inside_retrieval.json",
         "idepth": "inside_retrieval.json"}
#: The studies whose results have a row per method, each with per-seed runs, and their metric.
METHOD_STUDIES = {"lm": "perplexity", "recall": "accuracy", "hlm": "perplexity", "hrecall": "accuracy",
                  "ilm": "perplexity", "irecall": "accuracy"}
#: The task names of the training-free and base studies' references, as their files name them.
TASK_NAMES = {"lm": "lm", "recall": "retrieval"}
WINDOW_SETTINGS = ("full", "window", "sinks")  # the columns of every method, in the file's order
DETAIL_SETTINGS = {"full": "full attention", "window": "window {L}", "window-in-cache": "window {L}, in-cache positions",
                   "sinks": "4 sinks + window {W}", "sinks-in-cache": "4 sinks + window {W}, in-cache positions"}


class ClaimError(ValueError):
    """A reference that names nothing, or a claim that the committed results do not support."""


@dataclass(frozen=True)
class Measure:
    """A measured number over seeds: ``seeds`` (None where the file keeps only the mean and the
    range), their ``mean``, ``low`` and ``high`` (None for a mean combined from such measures)."""

    name: str
    mean: float
    low: float | None
    high: float | None
    seeds: tuple[float, ...] | None

    @classmethod
    def of_seeds(cls, name: str, seeds: list[float]) -> Measure:
        return cls(name, sum(seeds) / len(seeds), min(seeds), max(seeds), tuple(seeds))

    @classmethod
    def constant(cls, name: str, number: float) -> Measure:
        return cls(name, number, number, number, None)

    def spread(self) -> tuple[float, float]:
        """The range over the seeds; a `ClaimError` where there is none."""
        if self.low is None or self.high is None:
            raise ClaimError(f"{self.name} has no range over seeds (a mean combined from means)")
        return self.low, self.high

    def values(self) -> tuple[float, ...]:
        """Every seed's value (the two ends of the range where the file keeps no seeds)."""
        return self.seeds if self.seeds is not None else self.spread()

    def combine(self, other: Measure, op: str) -> Measure:
        name = f"{self.name} {op} {other.name}"
        apply = _OPERATORS[op]
        constant_self, constant_other = self.seeds is None and self.low == self.high, \
            other.seeds is None and other.low == other.high
        if constant_self and constant_other:
            return Measure.constant(name, apply(self.mean, other.mean))
        mine = self.seeds if self.seeds is not None else (self.mean,) if constant_self else None
        theirs = other.seeds if other.seeds is not None else (other.mean,) if constant_other else None
        if mine is not None and theirs is not None and (len(mine) == len(theirs) or 1 in (len(mine), len(theirs))):
            count = max(len(mine), len(theirs))
            pairs = zip(mine * count if len(mine) == 1 else mine, theirs * count if len(theirs) == 1 else theirs)
            return Measure.of_seeds(name, [apply(a, b) for a, b in pairs])
        return Measure(name, apply(self.mean, other.mean), None, None, None)  # means only


_OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


@functools.cache
def _results(study: str, large: bool) -> dict[str, Any]:
    if study not in FILES:
        raise ClaimError(f"no study {study!r}; the studies are {sorted(FILES)}")
    path = RESULTS / "large" / FILES[study] if large else RESULTS / FILES[study]
    if not path.is_file():
        raise ClaimError(f"no results file {path.name} for {'large.' if large else ''}{study}")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _get(data: Any, key: str | int, name: str) -> Any:
    try:
        return data[key]
    except (KeyError, IndexError, TypeError):
        raise ClaimError(f"{name}: no {key!r} here") from None


def _json_number(reference: str) -> Measure:
    """``[large.]STUDY:a.b[0]["key"]``: one number of a results file."""
    study, _, path = reference.partition(":")
    large = study.startswith("large.")
    data: Any = _results(study.removeprefix("large."), large)
    for part in re.findall(r"\[\s*(-?\d+|\"[^\"]*\")\s*\]|([^.\[\]]+)", path):
        key: str | int = part[1] if part[1] else json.loads(part[0])
        data = _get(data, key, reference)
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise ClaimError(f"{reference} is not a number: {data!r}")
    return Measure.constant(reference, float(data))


def _length_index(results: dict[str, Any], at: str, name: str, lengths: list[int] | None = None) -> int:
    match = re.fullmatch(r"(\d*)L", at)
    if not match:
        raise ClaimError(f"{name}: a length is written kL (L, 2L, 8L), got {at!r}")
    length = int(match[1] or 1) * results["config"]["train_length"]
    lengths = results["eval_lengths"] if lengths is None else lengths
    if length not in lengths:
        raise ClaimError(f"{name}: not scored at {at} ({length}); scored at {lengths}")
    return lengths.index(length)


def _seeds(name: str, values: list[float | None]) -> Measure:
    if not values or any(v is None for v in values):
        raise ClaimError(f"{name}: not scored there (the model cannot run at that length)")
    return Measure.of_seeds(name, [float(v) for v in values if v is not None])


LEARNED = 0.9  # a retrieval seed "learned the task": accuracy at L at least this (the chapter's rule)


def _method_measure(study: str, results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``lm.METHOD@kL``, ``lm.METHOD@pA-B`` (mean loss over positions A to B), ``lm.METHOD@train``
    and ``@score`` (CPU seconds), and ``recall.METHOD[.learned|.not-learned]@kL``; the same for
    the four-layer hybrid study, ``hlm`` and ``hrecall``."""
    metric = METHOD_STUDIES[study]
    text = metric == "perplexity"
    entry = _get(results["methods"], parts[0], name)
    runs = entry["runs"]
    if parts[1:]:
        if text or parts[1:] not in (["learned"], ["not-learned"]):
            raise ClaimError(f"{name}: write {study}.METHOD@kL (recall also METHOD.learned, METHOD.not-learned)")
        runs = [run for run in runs if (run[metric][0] >= LEARNED) == (parts[1] == "learned")]
        if not runs:
            raise ClaimError(f"{name}: no seed of {parts[0]} is {parts[1]}")
    if at in ("train", "score"):  # CPU seconds of training, of scoring at every length
        return _seeds(name, [run["train_cpu_seconds" if at == "train" else "eval_cpu_seconds"] for run in runs])
    stretch = re.fullmatch(r"p(\d+)-(\d+)", at)
    if stretch and text:
        return _seeds(name, [_position_loss(run, results, int(stretch[1]), int(stretch[2]), name) for run in runs])
    index = _length_index(results, at, name)
    return _seeds(name, [run[metric][index] for run in runs])


def _position_loss(run: dict[str, Any], results: dict[str, Any], first: int, last: int, name: str) -> float:
    """The mean loss over positions ``first`` to ``last`` of one run's 8L windows (buckets of
    ``config.position_bucket`` positions, so both ends must fall on bucket edges)."""
    bucket = results["config"]["position_bucket"]
    losses = run["position_loss"]
    if first % bucket or (last + 1) % bucket or not first <= last < len(losses) * bucket:
        raise ClaimError(f"{name}: positions go in blocks of {bucket} from 0 to {len(losses) * bucket - 1}")
    chosen = losses[first // bucket:(last + 1) // bucket]
    return float(sum(chosen) / len(chosen))


def _extension_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``ext.TASK.RULE[.tuned]@kL``."""
    if len(parts) not in (2, 3) or parts[2:] not in ([], ["tuned"]):
        raise ClaimError(f"{name}: write ext.lm.RULE@kL or ext.lm.RULE.tuned@kL")
    task = _get(results["tasks"], {"lm": "lm", "recall": "retrieval"}.get(parts[0], parts[0]), name)
    rule, tuned = parts[1], parts[2:] == ["tuned"]
    _get(task["fine_tuned" if tuned else "no_training"], rule, name)
    runs = task["runs"]
    if at == "L":
        return _seeds(name, [run["fine_tuned"][f"{rule}@L"][0] if tuned else run["at_train_length"] for run in runs])
    index = _length_index(results, at, name)
    return _seeds(name, [run["fine_tuned" if tuned else "no_training"][rule][index] for run in runs])


def _windows_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``windows.METHOD.SET@8L`` and ``windows.detail.SET@8L`` / ``@blockN``."""
    if len(parts) != 2:
        raise ClaimError(f"{name}: write windows.METHOD.SETTING@8L or windows.detail.SETTING@8L")
    train = results["config"]["train_length"]
    block = re.fullmatch(r"block(\d+)", at)
    if not block and _length_index(results, at, name, [results["length"]]) != 0:
        raise ClaimError(f"{name}: the windows study scores {results['length']} tokens only")
    if parts[0] == "detail":
        label = _get(DETAIL_SETTINGS, parts[1], name).format(L=train, W=train - results["sinks"])
        row = next((row for row in results["settings"] if row["label"] == label), None)
        if row is None:
            raise ClaimError(f"{name}: no setting {label!r} in the file")
        number = _get(row["loss_by_block"], int(block[1]), name) if block else row["perplexity"]
        return Measure.of_seeds(name, [float(number)])
    if block:
        raise ClaimError(f"{name}: only windows.detail has blocks")
    entry = _get(results["methods"], parts[0], name)
    if parts[1] not in WINDOW_SETTINGS:
        raise ClaimError(f"{name}: the settings are {WINDOW_SETTINGS}")
    scores = list(entry.values())[WINDOW_SETTINGS.index(parts[1])]
    return Measure(name, scores["perplexity"][0], scores["perplexity_min"][0], scores["perplexity_max"][0], None)


def _vit_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``vit.METHOD@GxG``."""
    grid = re.fullmatch(r"(\d+)x\1", at)
    if not grid or int(grid[1]) not in results["grids"]:
        raise ClaimError(f"{name}: the grids are {[f'{g}x{g}' for g in results['grids']]}")
    entry = _get(results["methods"], parts[0], name)
    return _seeds(name, entry["accuracy"][results["grids"].index(int(grid[1]))])


def _free_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``free.TASK.METHOD@kL``: a training-free method on the RoPE models (``rope``: as trained)."""
    if len(parts) != 2:
        raise ClaimError(f"{name}: write free.lm.METHOD@kL or free.recall.METHOD@kL")
    task = _get(results["tasks"], TASK_NAMES.get(parts[0], parts[0]), name)
    _get(task["methods"], parts[1], name)
    index = _length_index(results, at, name)
    return _seeds(name, [run["scores"][parts[1]][index] for run in task["runs"]])


def _base_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``base.lm.BASE@kL`` (perplexity), ``base.recall.BASE@kL`` (MQAR accuracy) and
    ``base.recall.BASE@distN`` (accuracy at L in distance bucket N)."""
    if len(parts) != 2 or parts[0] not in TASK_NAMES:
        raise ClaimError(f"{name}: write base.lm.BASE@kL, base.recall.BASE@kL or base.recall.BASE@distN")
    runs = _get(results["bases"], parts[1], name)["runs"]
    bucket = re.fullmatch(r"dist(\d+)", at)
    if bucket:
        if parts[0] != "recall":
            raise ClaimError(f"{name}: only base.recall has distance buckets")
        return _seeds(name, [_get(run["accuracy_by_distance"], int(bucket[1]), name) for run in runs])
    metric = "perplexity" if parts[0] == "lm" else "accuracy"
    index = _length_index(results, at, name)
    return _seeds(name, [run[metric][index] for run in runs])


def _depth_measure(results: dict[str, Any], parts: list[str], at: str, name: str) -> Measure:
    """``depth.METHOD.PLACE@kL``, ``depth.remap.METHOD.PLACE@kL`` (RoPE with a training-free
    method) and ``depth.hybrid.METHOD.PLACE@kL`` (a four-layer model); PLACE start, middle or end."""
    if len(parts) == 3 and parts[0] in ("remap", "hybrid"):
        row = f"rope + {parts[1]}" if parts[0] == "remap" else f"{parts[1]} (4 layers)"
    elif len(parts) == 2:
        row = parts[0]
    else:
        raise ClaimError(f"{name}: write depth.METHOD.PLACE@kL, depth.remap.METHOD.PLACE@kL or "
                         f"depth.hybrid.METHOD.PLACE@kL")
    entry = _get(results["rows"], row, name)
    place = parts[-1]
    _get(entry["accuracy"], place, name)
    index = _length_index(results, at, name)
    return _seeds(name, [run["accuracy"][place][index] for run in entry["runs"]])


def measure(reference: str) -> Measure:
    """The `Measure` a reference names (``lm.rope@8L``, ``lm:config.steps``); see the module."""
    reference = reference.strip()
    if ":" in reference:
        return _json_number(reference)
    match = re.fullmatch(r"(large\.)?([a-z]+)\.([\w.-]+)@([\w-]+)", reference)
    if not match:
        raise ClaimError(f"cannot read the reference {reference!r} (STUDY.NAME@LENGTH or STUDY:PATH)")
    large, study, rest, at = bool(match[1]), match[2], match[3].split("."), match[4]
    results = _results(study, large)
    if study in METHOD_STUDIES:
        return _method_measure(study, results, rest, at, reference)
    if study in ("free", "base", "depth", "idepth"):  # idepth: the inside study's MQAR models in depth's layout
        return {"free": _free_measure, "base": _base_measure, "depth": _depth_measure,
                "idepth": _depth_measure}[study](
            results, rest, at, reference)
    if study == "ext":
        return _extension_measure(results, rest, at, reference)
    if study == "windows":
        return _windows_measure(results, rest, at, reference)
    return _vit_measure(results, rest, at, reference)


#: The length part of a reference, for expressions: @8L, @6x6, @block3, @p64-95.
AT = r"@(?:p\d+-\d+|\w+)"


def every_method(reference: str) -> list[Measure]:
    """``lm.*@8L``: the measure of every method of the study that is scored there."""
    match = re.fullmatch(r"((?:large\.)?[a-z]+)\.\*((?:\.[\w-]+)*" + AT + ")", reference)
    if not match:
        raise ClaimError(f"{reference}: a * stands for the method, right after the study")
    results = _results(match[1].removeprefix("large."), match[1].startswith("large."))
    if "methods" not in results:
        raise ClaimError(f"{reference}: a * stands for every method of {sorted(METHOD_STUDIES)}")
    found = []
    for method in results["methods"]:
        try:
            found.append(measure(f"{match[1]}.{method}{match[2]}"))
        except ClaimError:
            continue  # not scored there (the learned table past L)
    return found
