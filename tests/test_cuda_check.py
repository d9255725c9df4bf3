"""The GPU check (tools/cuda_check.py) run on the CPU, so that it cannot rot between GPU sessions."""

from __future__ import annotations

import pytest

from tools.cuda_check import TOL_FLOAT32, check_method, main


@pytest.mark.parametrize("method", ["rope", "alibi", "path"])
def test_the_check_passes_on_the_cpu(method: str) -> None:
    row = check_method(method, "cpu")
    assert row["ok"], row
    assert 0 < row["float32_vs_float64"] < TOL_FLOAT32  # float32 rounding is seen, and it is small
    assert row["cache_vs_full"] < TOL_FLOAT32 and row["finite_gradients"]


def test_it_refuses_cuda_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(SystemExit):
        main(["--device", "cuda"])
