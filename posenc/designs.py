r"""The layer patterns of today's models, as plans for `posenc.model.TinyTransformer` at tiny scale.

Each design is a `posenc.layer_plan.LayerPlan` per layer for a model with ``position="rope"``. In
every one of them a layer is *global* when ``(i + 1) % every == 0`` (0-based i), the others
*local*, as the config classes of transformers 5.23.0 lay them out:

* ``"rnope-swa"``: local layers rotate (RoPE) within a sliding ``window``; global layers have no
  positions (NoPE) and see everything; ``every = 4``. Cohere's Command R7B and Command A
  (``models/cohere2/configuration_cohere2.py:96-101``: ``sliding_window_pattern`` 4;
  ``modeling_cohere2.py:221-222``: only the sliding-window layers rotate), after Yang et al. (2025),
  "Rope to Nope and Back Again", https://arxiv.org/abs/2501.18795.
* ``"irope"``: local layers rotate within a ``chunk`` and L2-normalise q and k after the rotation;
  global layers have no positions, see everything and scale their queries by the attention
  temperature \(1 + \beta \log(1 + \lfloor (p + 1) / \text{length} \rfloor)\) at position \(p\), with
  \(\beta\) = ``beta`` and ``length`` the chunk by default as in Llama 4 (8192 both); ``every = 4``. Llama 4 (``models/llama4/configuration_llama4.py:170-172``
  and ``:188-191``; ``modeling_llama4.py:331-366``).
* ``"rope-sinks"``: every layer rotates and has a learned sink logit per head; local layers see a
  sliding ``window``, global ones everything; ``every = 2``, the first layer local. gpt-oss
  (``models/gpt_oss/configuration_gpt_oss.py:83-86``; ``modeling_gpt_oss.py:243-253``, ``:285``).

What the tiny versions leave out: Llama 4's interleaved pair layout and gpt-oss's YaRN (the tiny
models train at their own length and use RoPE's half layout), grouped-query attention, and the
mixture-of-experts feed-forward layers.

Examples:
    >>> [(p.position, p.chunk, p.temperature is not None)
    ...  for p in design_plans("irope", 4, chunk=16)]
    [('rope', 16, False), ('rope', 16, False), ('rope', 16, False),
     ('none', None, True)]
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc._checks import check_choice, check_float, check_int, check_size_int
from posenc.layer_plan import LayerPlan
from posenc.temperature import QueryTemperature

__all__ = ["DESIGNS", "Design", "design_plans"]


@dataclass(frozen=True)
class Design:
    """A layer pattern: how often a layer is global, and which span its local layers need."""

    every: int
    span: str  # "window" or "chunk": what the local layers are limited to
    summary: str


#: The designs of `design_plans`.
DESIGNS: dict[str, Design] = {
    "rnope-swa": Design(4, "window", "RoPE + sliding window on local layers, NoPE + full attention on global ones"),
    "irope": Design(4, "chunk", "chunked RoPE + q/k norm on local layers, NoPE + temperature on global ones"),
    "rope-sinks": Design(2, "window", "RoPE + learned sinks everywhere, banded window and full layers alternating"),
}


def design_plans(design: str, num_layers: int, *, window: int | None = None, chunk: int | None = None,
                 every: int | None = None, beta: float = 0.1, temperature_length: int | None = None
                 ) -> tuple[LayerPlan, ...]:
    """The plans of the layers of a model built as ``design`` (see `DESIGNS`), for ``position="rope"``.

    Args:
        design: ``"rnope-swa"``, ``"irope"`` or ``"rope-sinks"``.
        num_layers: how many layers; at least one must be global (``num_layers >= every``).
        window: the sliding window of the local layers (``"rnope-swa"``, ``"rope-sinks"``).
        chunk: the chunk of the local layers (``"irope"``).
        every: one layer in ``every`` is global (default: the design's, 4, 4 and 2).
        beta: the temperature's growth (``"irope"``, Llama 4: 0.1).
        temperature_length: the temperature's step (``"irope"``; default: the chunk, as Llama 4).

    Examples:
        >>> [(p.position, p.window, p.sinks)
        ...  for p in design_plans("rope-sinks", 4, window=8)]
        [('rope', 8, True), ('rope', None, True), ('rope', 8, True),
         ('rope', None, True)]
    """
    design = check_choice("design", design, tuple(DESIGNS))
    num_layers = check_size_int("num_layers", num_layers)
    found = DESIGNS[design]
    every = found.every if every is None else check_int("every", every, minimum=1, maximum=num_layers)
    if num_layers < every:
        raise ValueError(f"design {design!r} makes one layer in every={every} global: num_layers must be >= {every}, "
                         f"got {num_layers}")
    given = {"window": window, "chunk": chunk}
    span = given.pop(found.span)
    if span is None:
        raise ValueError(f"design {design!r} needs {found.span}= (the span of its local layers), got None")
    unused = [name for name, value in given.items() if value is not None]
    if unused:
        raise ValueError(f"design {design!r} limits its local layers by {found.span}, got {unused[0]}= as well")
    span = check_int(found.span, span, minimum=1, maximum=1 << 20)
    beta = check_float("beta", beta, minimum=0.0, maximum=1e6)
    length = span if temperature_length is None else check_int("temperature_length", temperature_length,
                                                                minimum=1, maximum=1 << 53)
    window, chunk = (span, None) if found.span == "window" else (None, span)
    if design == "rnope-swa":
        local, global_ = LayerPlan("rope", window=window), LayerPlan("none")
    elif design == "irope":
        local = LayerPlan("rope", chunk=chunk, qk_norm=True)
        global_ = LayerPlan("none", temperature=QueryTemperature(beta, length, offset=1))
    else:
        local, global_ = LayerPlan("rope", window=window, sinks=True), LayerPlan("rope", sinks=True)
    return tuple(global_ if (i + 1) % every == 0 else local for i in range(num_layers))
