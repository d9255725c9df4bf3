"""Check every position method of `posenc.TinyTransformer` on a GPU against a float64 CPU reference.

For each method: the same weights run on the CPU in float64 (the reference) and on ``--device`` in
float32; then, on the device, a prefill-and-decode with a `posenc.inference.KVCache` against the full
forward, one training step (finite gradients), and a ``.half()`` copy whose logits must stay finite
and near the float32 ones. Prints one line per method
and writes a JSON summary; exits non-zero if any check fails. CI does not run it (no GPU there): it is
for a machine with one, ``python -m tools.cuda_check --device cuda --out cuda_check.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch

from posenc import TinyTransformer
from posenc.inference import KVCache
from posenc.methods import POSITION_METHODS

VOCAB, DIM, HEADS, LAYERS, BATCH, SEQ, PREFILL, MAX_LEN = 32, 64, 4, 2, 2, 40, 24, 64
#: float32 on the device against float64 on the CPU (logits of order 1, depth 2)
TOL_FLOAT32 = 1e-4
#: the half-precision copy against float32 on the device (its weights are rounded to 11 bits)
TOL_HALF = 5e-2


def _model(method: str) -> TinyTransformer:
    torch.manual_seed(0)
    return TinyTransformer(VOCAB, DIM, HEADS, LAYERS, position=method, max_len=MAX_LEN).eval()


def _max_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double().cpu() - b.double().cpu()).abs().max())


def check_method(method: str, device: str) -> dict[str, Any]:
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))
    reference = _model(method).double()
    with torch.no_grad():
        expected = reference(tokens)
    model = _model(method).to(device)
    on_device = tokens.to(device)
    with torch.no_grad():
        full = model(on_device)
    row: dict[str, Any] = {"method": method, "float32_vs_float64": _max_error(full, expected)}
    try:
        cache = KVCache()
        with torch.no_grad():
            steps = [model(on_device[:, :PREFILL], cache=cache)[:, -1]]
            steps += [model(on_device[:, i:i + 1], cache=cache)[:, -1] for i in range(PREFILL, SEQ)]
        row["cache_vs_full"] = _max_error(torch.stack(steps, 1), full[:, PREFILL - 1:])
    except ValueError as error:  # a method that refuses a cache says so, on every device alike
        row["cache_refused"] = str(error)[:120]
    model.train()
    loss = torch.nn.functional.cross_entropy(model(on_device).flatten(0, 1), on_device.roll(-1, 1).flatten())
    loss.backward()
    row["finite_gradients"] = all(bool(p.grad.isfinite().all()) for p in model.parameters() if p.grad is not None)
    half = _model(method).to(device).half().eval()
    with torch.no_grad():
        half_logits = half(on_device)
    row["half_vs_float32"] = _max_error(half_logits, full)
    row["ok"] = (row["float32_vs_float64"] < TOL_FLOAT32 and row.get("cache_vs_full", 0.0) < TOL_FLOAT32
                 and row["finite_gradients"] and bool(half_logits.isfinite().all()) and row["half_vs_float32"] < TOL_HALF)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default=None, help="where to write the JSON summary")
    args = parser.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda needs a GPU that torch can see")
    rows = []
    for method in POSITION_METHODS:
        row = check_method(method, args.device)
        rows.append(row)
        cache = f"{row['cache_vs_full']:.1e}" if "cache_vs_full" in row else "refused"
        print(f"{method:>15}: float32 vs float64 {row['float32_vs_float64']:.1e}, cache vs full {cache}, "
              f"half vs float32 {row['half_vs_float32']:.1e} -> {'ok' if row['ok'] else 'FAILED'}", flush=True)
    summary = {"device": args.device, "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None, "rows": rows}
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(summary, handle, indent=1)
    return 0 if all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
