"""Argument validation shared by every public function.

One place for the wording of errors, so that every message names the argument, the value
received and what is allowed, e.g. ``ValueError("dim must be a positive even integer, got 7")``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import torch
from torch import Tensor


def is_integer(value: object) -> bool:
    # bool is an int subclass, but True as a "size" is always a bug.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in [minimum, maximum]."""
    if not is_integer(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    result = int(value)  # type: ignore[call-overload]
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {result}")
    return result


def check_positive_int(name: str, value: object) -> int:
    return check_int(name, value, minimum=1)


def check_even_dim(name: str, value: object) -> int:
    """Sizes split into (sin, cos) or rotation pairs must be positive and even."""
    if not is_integer(value):
        raise TypeError(f"{name} must be a positive even integer, got {type(value).__name__} {value!r}")
    result = int(value)  # type: ignore[call-overload]
    if result <= 0 or result % 2:
        raise ValueError(f"{name} must be a positive even integer, got {result}")
    return result


def check_float(name: str, value: object, *, positive: bool = False, minimum: float | None = None,
                maximum: float | None = None) -> float:
    """Return ``value`` as a finite float within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result}")
    if positive and result <= 0:
        raise ValueError(f"{name} must be > 0, got {result}")
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {result}")
    return result


def check_tensor(name: str, value: object, *, ndim: int | Sequence[int] | None = None,
                 min_ndim: int | None = None, floating: bool = False, finite: bool = False) -> Tensor:
    """Check that ``value`` is a tensor of the expected rank (and, optionally, finite floats)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim) if ndim is not None else None
    if allowed is not None and value.ndim not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise ValueError(f"{name} must have {wanted} dimensions, got shape {tuple(value.shape)}")
    if min_ndim is not None and value.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {tuple(value.shape)}")
    if floating and not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if finite and value.is_floating_point() and not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return value


def check_size(name: str, value: Tensor, axis: int, expected: int, *, expected_from: str) -> None:
    """Check one axis of a tensor against a size fixed elsewhere (a module's dim, another tensor)."""
    actual = value.shape[axis]
    if actual != expected:
        raise ValueError(
            f"{name} must have size {expected} in dimension {axis} (to match {expected_from}), "
            f"got shape {tuple(value.shape)}"
        )


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_positions(name: str, value: object) -> Tensor:
    """Positions: an int n (meaning 0..n-1) or a 1-D tensor of finite positions."""
    if is_integer(value):
        n = check_int(name, value, minimum=0)
        return torch.arange(n, dtype=torch.float64)
    tensor = check_tensor(name, value, ndim=1, finite=True)
    if tensor.dtype == torch.bool or tensor.is_complex():
        raise TypeError(f"{name} must hold integer or real positions, got dtype {tensor.dtype}")
    return tensor.to(torch.float64)
