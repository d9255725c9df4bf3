"""The digits ViT at larger grids with the position schemes of today's image and video models. Measured.

The protocol of `posenc.experiments.vit_resolution` (train at 8 x 8 pixels, a 4 x 4 grid of
patches; test on the held-out digits upsampled to 12 and 16 pixels, 6 x 6 and 8 x 8 grids; no
fine-tuning), three seeds, with:

* ``"learned"`` and ``"rope"`` (axial, patch indices, base 100) as in that study;
* test-time changes of the same RoPE model on a larger grid: ``"rope-rescaled"`` (coordinates
  squeezed into the trained range), ``"rope-ntk"`` (per-axis NTK) and ``"rope-riflex"`` (RIFLEx
  on each axis, the intrinsic pair the one whose period is closest to the trained side);
* other RoPE models: ``"rope-mixed"`` (Heo et al.'s learned directions, base 10),
  ``"rope-normalized"`` (DINOv3's patch centres in [-1, 1]) and ``"rope-dinov3"`` (the same,
  trained with DINOv3's rescale draw of [1/2, 2], the released models' setting) and
  ``"rope-dinov3-jitter"`` (that draw and, per axis, DINOv3's jitter in [1/2, 2], which the released
  models leave off).

Everything runs on the CPU with one thread per process and fixed seeds::

    python -m posenc.experiments vit-images --config full --output results.json
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from posenc.experiments import vit_resolution
from posenc.experiments._results import read_json

METHODS = ("learned", "rope", "rope-rescaled", "rope-ntk", "rope-riflex", "rope-mixed", "rope-normalized",
           "rope-dinov3", "rope-dinov3-jitter")
RESULTS_PATH = Path(__file__).resolve().parent / "results" / "vit_images.json"
CONFIGS = {
    "full": replace(vit_resolution.CONFIGS["full"], name="images", methods=METHODS, seeds=(0, 1, 2)),
    "tiny": replace(vit_resolution.CONFIGS["tiny"], name="images-tiny", methods=METHODS),
}
summary_lines = vit_resolution.summary_lines


def run(config: vit_resolution.Config, *, workers: int = 2, progress: bool = False,
        device: str = "cpu") -> dict[str, Any]:
    """Train and score every (method, seed) of ``config`` on the CPU (the study's protocol)."""
    if device != "cpu":
        raise ValueError(f"device must be 'cpu' (the digits study runs on the CPU), got {device!r}")
    results = vit_resolution.run(config, workers=workers, progress=progress)
    results["experiment"] = "vit_images"
    return results


def load_results(path: str | Path = RESULTS_PATH) -> dict[str, Any]:
    """Read a results file (by default the committed one that the chapter is drawn from)."""
    return read_json(path)
