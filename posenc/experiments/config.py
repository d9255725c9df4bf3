"""The configuration shared by the studies of the extrapolation chapter, and their models.

One `Config` decides every number of the language-modelling, retrieval, context-extension and
windows studies: the model size, the optimiser, the seeds, the lengths, and each task's own
settings. The ``"full"`` configuration is the committed CPU run, ``"large"`` the larger run for a
GPU, and ``"tiny"`` the one the tests run end to end. The later studies (training-free
extension, the base against the context, depth) use the same `Config` and add their own
`StudySettings` of the same name.

Models trained once are kept in a cache folder (``.cache/experiments`` in the working directory,
or ``$POSENC_EXPERIMENT_CACHE``), keyed by the settings training depends on (`TRAINING_FIELDS`,
`TASK_FIELDS`), the task, method, seed, device and library versions, so the context-extension and
windows studies reuse the models the
language-modelling and retrieval studies trained. Training is deterministic on the CPU, so a
cache hit and a fresh run give the same model.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from posenc._checks import check_choice, check_int
from posenc.model import TinyTransformer
from posenc.randomized import randomized_positions

#: Every method the studies train: the ten position methods of `posenc.model`, plus RoPE trained
#: on randomized positions (Ruoss et al., 2023), which evaluates with the plain positions 0 .. n-1.
STUDIED_METHODS = ("none", "sinusoidal", "learned", "rope", "rope-randomized", "alibi", "t5",
                   "xpos", "kerple", "fire", "cope")
#: The tasks a model can be trained on.
TASKS = ("lm", "retrieval")


# --8<-- [start:config]
@dataclass(frozen=True)
class Config:
    """Everything that decides the numbers of the studies."""

    name: str
    methods: tuple[str, ...]
    seeds: tuple[int, ...]  # one model per method and seed
    # L: tokens per training window (and rows of the learned table)
    train_length: int
    eval_multiples: tuple[int, ...]  # evaluate at m * L for each m
    dim: int
    num_heads: int
    num_layers: int
    batch_size: int
    steps: int  # language-modelling training steps
    learning_rate: float
    # linear warm-up, then cosine decay to min_lr_ratio * learning_rate
    warmup_steps: int
    min_lr_ratio: float
    weight_decay: float
    grad_clip: float
    # rope-randomized draws positions from 0 .. randomized_multiple * L - 1
    # (4 times the longest length scored, as the authors' 2048 for tests
    # up to 500)
    randomized_multiple: int
    validation_fraction: float
    max_eval_characters: int | None  # None: all of the validation text
    # width of the position buckets of the loss-by-position curve
    position_bucket: int
    # retrieval (multi-query associative recall)
    retrieval_steps: int
    # key-value pairs at the start of every sequence, at every length
    retrieval_pairs: int
    # queries per sequence, at random positions after the pairs
    retrieval_queries: int
    retrieval_symbols: int  # distinct keys, and distinct values
    retrieval_eval_sequences: int  # test sequences per length
    # context extension: a short fine-tune at finetune_multiple * L
    finetune_steps: int
    finetune_learning_rate: float
    finetune_multiple: int

    @property
    def eval_lengths(self) -> list[int]:
        return [m * self.train_length for m in self.eval_multiples]

    def as_dict(self) -> dict[str, Any]:
        # tuples become lists, as in the JSON file
        return json.loads(json.dumps(asdict(self)))


#: The committed CPU run: three seeds of every method. The others change
#: only what their comments say.
FULL = Config(
    name="full", methods=STUDIED_METHODS, seeds=(0, 1, 2), train_length=64,
    eval_multiples=(1, 2, 4, 8), dim=64, num_heads=4, num_layers=2,
    batch_size=32, steps=1200, learning_rate=2e-3, warmup_steps=100,
    min_lr_ratio=0.1, weight_decay=0.01, grad_clip=1.0,
    randomized_multiple=32, validation_fraction=0.1,
    max_eval_characters=16384, position_bucket=16,
    retrieval_steps=1000, retrieval_pairs=8, retrieval_queries=8,
    retrieval_symbols=16, retrieval_eval_sequences=128, finetune_steps=60,
    finetune_learning_rate=5e-4, finetune_multiple=2,
)

CONFIGS = {
    "full": FULL,
    # The larger run, for a GPU: the full protocol with a longer context
    # and a wider, deeper model.
    "large": replace(
        FULL, name="large",
        seeds=(0,),  # one seed: the GPU time of the first run
        train_length=256,  # 4x the context: L = 256 ... 8L = 2048
        # a wider and deeper model (still 4 heads, head width 32)
        dim=128, num_layers=3,
        batch_size=16,  # half the windows per step, each four times longer
        steps=1000,
        # positions up to 8 x 256 = 2048, the longest length scored
        randomized_multiple=8,
        max_eval_characters=32768,  # four windows of 8L
        position_bucket=64,  # the same 32 buckets at the longest length
        retrieval_steps=1200,
        retrieval_queries=16,  # twice the queries in a 4 times longer window
        finetune_steps=50,
    ),
    # The end-to-end test: every study in a few seconds; the numbers mean
    # nothing.
    "tiny": replace(
        FULL, name="tiny",
        seeds=(0, 1),  # two seeds, so that the spread over seeds is exercised
        train_length=16,
        dim=16, num_heads=2, num_layers=1,
        batch_size=4, steps=12, warmup_steps=4,
        randomized_multiple=8,
        max_eval_characters=512,
        position_bucket=8,
        retrieval_steps=12, retrieval_pairs=3, retrieval_queries=3,
        retrieval_symbols=8, retrieval_eval_sequences=8,
        finetune_steps=4, finetune_learning_rate=1e-3,
    ),
}
# --8<-- [end:config]

#: The later studies' configurations (training-free extension, the base against the context, depth,
#: today's hybrid designs): those of `CONFIGS`, except the larger run. There the MQAR models train
#: for 3000 steps, since with 1200 none of the first larger run's models left the loss plateau
#: (each seed's training curve is in ``results/large/retrieval.json``), and only the methods those
#: studies need there are trained: RoPE (the base of every training-free method), and NoPE and
#: ALiBi beside it; still one seed, for the GPU time (the chapter says how much).
LATER_CONFIGS = {
    **CONFIGS,
    "large": replace(CONFIGS["large"], methods=("none", "rope", "alibi"), retrieval_steps=3000),
}


@dataclass(frozen=True)
class StudySettings:
    """The settings of the later studies (training-free extension, the base against the context,
    depth), kept apart from `Config` so that the results files of the first studies keep the
    configuration they were made with."""

    name: str
    bases: tuple[float, ...]  # the RoPE bases trained at L (10000 is the other studies' RoPE model)
    base_eval_sequences: int  # MQAR test sequences at L, scored by the distance of each query to its key
    distance_bucket: int  # width, in tokens, of the distance buckets
    depths: tuple[float, ...]  # where the block of pairs sits before the queries: 0 start .. 1 end
    depth_query_span: int  # the queries fall in the last depth_query_span tokens
    depth_eval_sequences: int  # test sequences per length and depth

    def as_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))


FULL_SETTINGS = StudySettings(
    name="full", bases=(50.0, 200.0, 500.0, 1000.0, 2000.0, 10000.0, 1e6), base_eval_sequences=512,
    distance_bucket=8, depths=(0.0, 0.5, 1.0), depth_query_span=32, depth_eval_sequences=128,
)

SETTINGS = {
    "full": FULL_SETTINGS,
    "large": replace(FULL_SETTINGS, name="large",
                     bases=(100.0, 500.0, 2500.0, 10000.0, 1e6),  # five, for the GPU time: two below the
                     #  bound for head width 32 at L = 256 (about 2169), three above it
                     distance_bucket=32,  # the same 8 buckets over L = 256
                     depth_query_span=128),  # L / 2, as in full
    "tiny": replace(FULL_SETTINGS, name="tiny",
                    bases=(100.0, 10000.0),  # two bases: one new model, one shared with the other studies
                    base_eval_sequences=8, distance_bucket=4, depth_query_span=8, depth_eval_sequences=8),
}


def check_device(device: object) -> str:
    """``"cpu"``, or ``"cuda"``/``"cuda:N"`` when a GPU is present."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda', got {type(device).__name__}")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda' (optionally 'cuda:N'), got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} needs a GPU, and torch.cuda.is_available() is False here")
    return device


def build_model(method: str, config: Config, vocab_size: int, seed: int = 0) -> TinyTransformer:
    """The model of one method, initialised from ``seed``."""
    method = check_choice("method", method, STUDIED_METHODS)
    seed = check_int("seed", seed, minimum=0)
    torch.manual_seed(seed)
    position = "rope" if method == "rope-randomized" else method
    randomized = config.randomized_multiple * config.train_length if method == "rope-randomized" else None
    return TinyTransformer(vocab_size, config.dim, config.num_heads, config.num_layers, position=position,
                           max_len=max_length(method, config), randomized_max_len=randomized)


def evaluation_positions(model: nn.Module, rows: int, length: int,
                         generator: torch.Generator) -> torch.Tensor | None:
    """The positions a model is scored with: None (``0 .. length-1``) for every method except
    randomized positions, which get a sorted random subset of ``0 .. randomized_max_len - 1`` per
    row, as at training time. The authors' code draws them at every call, evaluation included
    (Ruoss et al., 2023, ``models/transformer.py`` of google-deepmind/randomized_positional_encodings).
    At ``length == randomized_max_len`` the only subset is ``0 .. length-1``."""
    limit = getattr(model, "randomized_max_len", None)  # None for models scored on 0 .. n-1
    if limit is None:
        return None
    return torch.stack([randomized_positions(length, limit, generator=generator) for _ in range(rows)])


def max_length(method: str, config: Config) -> int | None:
    """The longest input a method's model accepts (the learned table's rows), None if unbounded."""
    return config.train_length if method == "learned" else None


def cache_dir() -> Path:
    return Path(os.environ.get("POSENC_EXPERIMENT_CACHE", Path.cwd() / ".cache" / "experiments"))


#: The configuration fields a trained model depends on: the model, the optimiser, and the task's
#: data. Changing anything else (the lengths scored, the seeds listed) keeps the cached models.
TRAINING_FIELDS = ("train_length", "dim", "num_heads", "num_layers", "batch_size", "learning_rate",
                   "warmup_steps", "min_lr_ratio", "weight_decay", "grad_clip")
TASK_FIELDS = {"lm": ("steps", "validation_fraction"),
               "retrieval": ("retrieval_steps", "retrieval_pairs", "retrieval_queries", "retrieval_symbols")}


def checkpoint_path(task: str, method: str, seed: int, config: Config, device: str) -> Path:
    """Where the trained model of one task, method and seed is cached."""
    task = check_choice("task", task, TASKS)
    from posenc.experiments._results import versions

    fields = TRAINING_FIELDS + TASK_FIELDS[task] + (("randomized_multiple",) if method == "rope-randomized" else ())
    settings = {name: getattr(config, name) for name in fields}
    key = json.dumps([settings, task, method, seed, torch.device(device).type, versions()], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / config.name / f"{task}-{method}-seed{seed}-{digest}.pt"
