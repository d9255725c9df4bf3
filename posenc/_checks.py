"""Argument validation shared by every public function, and the contract it enforces.

One place for the wording of errors, so that every message names the argument, the value
received and what is allowed, e.g. ``ValueError("dim must be a positive even integer, got 7")``.

The bad-input contract
----------------------
Every public callable of posenc (the functions and classes of its public modules, module
constructors, ``forward`` and the other public methods) either returns a correct result or raises

* ``TypeError`` for a value of the wrong kind: a float, a string or a bool where an integer is
  meant (``True`` is not a size), anything but a real ``bool`` for a flag (``causal="no"`` is an
  error, not ``True``), a non-tensor where a tensor is meant, a bool or complex tensor where
  real numbers are meant, a dtype that is not a floating-point dtype;
* ``ValueError`` for a value of the right kind outside what is allowed: a negative or absurdly
  large size, NaN or inf in a parameter, a tensor of the wrong rank or shape, a position or offset
  beyond what the computation can represent (Python integers are unbounded: ``10**400`` is
  answered with a ValueError that names it, never an ``OverflowError``);

and the message names the argument as the caller spelled it, the value received and what is
allowed. Nothing else escapes: no ``IndexError``, ``AttributeError``, ``OverflowError``,
``ZeroDivisionError``, ``NotImplementedError`` or torch ``RuntimeError`` from deep inside, no
silent NaN in a result computed from finite arguments, no hang. Sizes are bounded (`MAX_SIZE`
per axis, `MAX_ELEMENTS` per table) so that an absurd request fails in well under a second
instead of trying to allocate gigabytes.

The one exception is activations: the tensors a layer transforms (``x``, ``q``, ``k``, ``v``)
are checked for type, rank and shape, but NaN or inf in them is carried through unchecked, as
torch's own layers do: finding it would cost a full pass over every activation.

The property test ``tests/test_api_contract.py`` walks the whole public API with wrong types,
wrong ranks, out-of-range values, NaN and inf, bools, complex numbers, empty tensors and huge
integers, and accepts only these outcomes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

# torch is imported inside the tensor checks, not here: the config reader (posenc.configs) uses
# only the scalar checks and must load without torch (a light install, posenc-inspect).
if TYPE_CHECKING:
    import torch
    from torch import Tensor

__all__ = [
    "MAX_ELEMENTS", "MAX_EXACT_POSITION", "MAX_GRID_CELLS", "MAX_POSITION_ID", "MAX_SIZE", "check_bool",
    "check_broadcast", "check_choice", "check_elements", "check_even_dim", "check_finite_result",
    "check_float", "check_float_dtype", "check_int", "check_position_ids", "check_position_tensor",
    "check_positions", "check_positions_match", "check_real_tensor", "check_rotary_input", "check_size",
    "check_size_int", "check_tensor", "check_token_ids", "is_integer",
]

# The limits. Each bounds one kind of request, so that an absurd one fails at once.
#: Largest size accepted for one axis (a length, a width, a number of heads or buckets).
MAX_SIZE = 1 << 24
#: Largest number of elements a function may be asked to build (1 GiB of float64).
MAX_ELEMENTS = 1 << 27
#: Largest position or offset computed in float64, which represents every integer up to 2**53 exactly.
MAX_EXACT_POSITION = 1 << 53
#: Largest integer position id a model, its position tables and its KV cache accept: tables are
#: built up to the largest position seen, so this also bounds their size.
MAX_POSITION_ID = 1 << 20
#: Largest grid of image or video patches (cells, or tokens of a grid).
MAX_GRID_CELLS = 1 << 20


def is_integer(value: object) -> bool:
    # bool is an int subclass, but True as a "size" is always a bug.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in [minimum, maximum]."""
    if not is_integer(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    result = int(value)  # type: ignore[call-overload]
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_show_int(result)}")
    if maximum is not None and result > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {_show_int(result)}")
    return result


def _show_int(value: int) -> str:
    # Python refuses to print integers of more than 4300 digits; huge ones are shown by size.
    return str(value) if abs(value) < 10**30 else f"{'-' if value < 0 else ''}an integer of {abs(value).bit_length()} bits"


def check_even_dim(name: str, value: object) -> int:
    """Sizes split into (sin, cos) or rotation pairs must be positive and even."""
    if not is_integer(value):
        raise TypeError(f"{name} must be a positive even integer, got {type(value).__name__} {value!r}")
    result = int(value)  # type: ignore[call-overload]
    if result <= 0 or result % 2:
        raise ValueError(f"{name} must be a positive even integer, got {_show_int(result)}")
    if result > MAX_SIZE:
        raise ValueError(f"{name} must be a positive even integer <= {MAX_SIZE}, got {_show_int(result)}")
    return result


def check_float(name: str, value: object, *, positive: bool = False, minimum: float | None = None,
                maximum: float | None = None) -> float:
    """Return ``value`` as a finite float within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        result = float(value)
    except OverflowError:  # a Python int (or Fraction) beyond the float range, e.g. 10**400
        raise ValueError(f"{name} must be finite, got {value!r:.40}") from None
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
    import torch
    if not isinstance(value, torch.Tensor):
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


def check_broadcast(name: str, tensor: Tensor, shape: tuple[int, ...]) -> None:
    """Check that a tensor added to (or masking) the logits broadcasts to their shape ``shape``."""
    import torch
    try:
        fits = torch.broadcast_shapes(tensor.shape, shape) == shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"{name} must broadcast to the logits' shape {shape} ([..., q_len, k_len]), "
                         f"got shape {tuple(tensor.shape)}")


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


def _ranks(ndim: int | Sequence[int]) -> str:
    return " or ".join(f"{n}-D" for n in ((ndim,) if isinstance(ndim, int) else ndim))


def check_position_tensor(name: str, value: object, *, ndim: int | Sequence[int] = (1, 2)) -> Tensor:
    """A tensor of finite integer or real positions with ``ndim`` dimensions, returned as given."""
    import torch
    if isinstance(value, torch.Tensor) and (value.dtype == torch.bool or value.is_complex()):
        raise TypeError(f"{name} must hold integer or real positions, got dtype {value.dtype}")
    return check_tensor(name, value, ndim=ndim, finite=True)


def check_positions(name: str, value: object, *, ndim: int | Sequence[int] = 1) -> Tensor:
    """Positions to tabulate: an int n (meaning 0 .. n-1) or a `check_position_tensor`; float64."""
    import torch
    if is_integer(value):
        n = check_int(name, value, minimum=0, maximum=MAX_SIZE)
        return torch.arange(n, dtype=torch.float64)
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be an integer or a {_ranks(ndim)} torch.Tensor, got {type(value).__name__}")
    return check_position_tensor(name, value, ndim=ndim).to(torch.float64)


def check_positions_match(name: str, positions: Tensor, x_name: str, x: Tensor, *,
                          coordinates: int | None = None) -> Tensor:
    """Positions (already a `check_position_tensor`) of the rows of ``x [..., seq, dim]``.

    ``[seq]`` or ``[batch, seq]``; with ``coordinates=n``, ``[seq, n]`` or ``[batch, seq, n]``
    (one coordinate per axis). A batch axis must match x's, or be 1 (shared by every row).
    """
    seq, extra = x.shape[-2], 0 if coordinates is None else 1
    if coordinates is None and positions.shape[-1] != seq:
        raise ValueError(f"{name} must have {seq} entries in its last dimension (the seq dimension of {x_name}, "
                         f"shape {tuple(x.shape)}), got shape {tuple(positions.shape)}")
    if coordinates is not None and positions.shape[-2:] != (seq, coordinates):
        raise ValueError(f"{name} must have shape [seq, n_axes] or [batch, seq, n_axes] = [..., {seq}, {coordinates}] "
                         f"(the seq dimension of {x_name}, one coordinate per axis), got shape {tuple(positions.shape)}")
    if positions.ndim == 2 + extra:  # a batch axis
        if x.ndim < 3:
            raise ValueError(f"{name} of shape {tuple(positions.shape)} need {x_name} with a batch dimension, "
                             f"got {x_name} of shape {tuple(x.shape)}")
        if positions.shape[0] not in (1, x.shape[0]):
            raise ValueError(f"{name} must have size {x.shape[0]} (the batch of {x_name}) or 1 in dimension 0, "
                             f"got shape {tuple(positions.shape)}")
    return positions


def check_position_ids(name: str, value: object, *, ndim: int | Sequence[int] | None = None,
                       like: tuple[int, int] | None = None) -> Tensor:
    """Integer position ids in ``[0, MAX_POSITION_ID]`` (rows of a table, entries of a cache), int64.

    ``like=(batch, seq)``: ids of a batch of tokens, ``[batch, seq]`` or one row ``[1, seq]``.
    """
    import torch
    tensor = check_tensor(name, value, ndim=2 if like is not None else ndim)
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor of position ids, got dtype {tensor.dtype}")
    if like is not None and (tensor.shape[1] != like[1] or tensor.shape[0] not in (1, like[0])):
        raise ValueError(f"{name} must have shape [batch, seq] = [{like[0]}, {like[1]}] (or [1, {like[1]}]), "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) > MAX_POSITION_ID):
        raise ValueError(f"{name} must be between 0 and {MAX_POSITION_ID}, got values from "
                         f"{int(tensor.min())} to {int(tensor.max())}")
    return tensor.long()


def check_bool(name: str, value: object) -> bool:
    """A flag must be a real bool: ``"no"``, ``0`` or ``None`` are errors, not False or True."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__} {value!r:.60}")
    return value


def check_size_int(name: str, value: object, *, minimum: int = 1) -> int:
    """A size (length, width, count): an integer in [minimum, MAX_SIZE]."""
    return check_int(name, value, minimum=minimum, maximum=MAX_SIZE)


def check_elements(what: str, *sizes: int) -> None:
    """Refuse to build a result of more than MAX_ELEMENTS elements; ``what`` names the request."""
    total = math.prod(sizes)
    if total > MAX_ELEMENTS:
        shape = " x ".join(str(s) for s in sizes)
        raise ValueError(f"{what} would have {shape} = {total} elements, more than the {MAX_ELEMENTS} allowed")


def check_real_tensor(name: str, value: object, *, ndim: int | Sequence[int] | None = None,
                      min_ndim: int | None = None, finite: bool = False) -> Tensor:
    """A tensor of real numbers (integer or floating point): bool and complex are TypeErrors."""
    import torch
    if isinstance(value, torch.Tensor) and (value.dtype == torch.bool or value.is_complex()):
        raise TypeError(f"{name} must hold real numbers (an integer or floating-point dtype), got dtype {value.dtype}")
    return check_tensor(name, value, ndim=ndim, min_ndim=min_ndim, finite=finite)


def check_float_dtype(name: str, value: object) -> torch.dtype:
    """A floating-point ``torch.dtype`` (float16, bfloat16, float32, float64)."""
    import torch
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {value!r:.60}")
    return value


def check_token_ids(name: str, value: object, vocab_size: int) -> Tensor:
    """Token ids ``[batch, seq]``: integers in ``[0, vocab_size)``, at least one row of one token."""
    import torch
    tensor = check_tensor(name, value, ndim=2)
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor of token ids, got dtype {tensor.dtype}")
    if tensor.shape[0] == 0 or tensor.shape[1] == 0:
        raise ValueError(f"{name} must hold at least one row of at least one token, got shape {tuple(tensor.shape)}")
    if int(tensor.min()) < 0 or int(tensor.max()) >= vocab_size:
        raise ValueError(f"{name} must be ids in [0, {vocab_size}) (vocab_size={vocab_size}), got values "
                         f"from {int(tensor.min())} to {int(tensor.max())}")
    return tensor


def check_rotary_input(name: str, value: object, *, dim: int | None = None) -> Tensor:
    """Queries or keys to rotate, ``[..., seq, width]`` floating point: width ``dim``, or any positive even one."""
    tensor = check_tensor(name, value, min_ndim=2, floating=True)  # complex is not floating point
    width = tensor.shape[-1]
    if width == 0 or width % 2:
        raise ValueError(f"the last dimension of {name} must be a positive even integer, got {width} "
                         f"(shape {tuple(tensor.shape)})")
    if dim is not None and width != dim:
        raise ValueError(f"{name} must have size {dim} in its last dimension (the module's dim), "
                         f"got shape {tuple(tensor.shape)}")
    return tensor


def check_finite_result(value: Tensor, cause: str) -> Tensor:
    """Refuse to return NaN or inf computed from finite arguments (e.g. position x frequency overflowing)."""
    import torch
    if value.is_floating_point() and not bool(torch.isfinite(value).all()):
        raise ValueError(f"{cause} overflow the float64 range (the result would hold NaN or inf)")
    return value
