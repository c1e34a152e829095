"""Values as plain data: what crosses from a checked process to the grader, copied and compared.

A result travels as a `torch.save` archive read with `weights_only=True`, so only tensors, numbers, strings
and containers of them may cross: `plain` reduces any value to that. `output_difference` compares two plain
values the way every check does (`torch.testing.assert_close` for tensors, strict in shape and dtype).
"""

from __future__ import annotations

import math
from typing import Any

import torch


def fresh_copy(value: Any) -> Any:
    """A tensor cloned (a call that changes its inputs in place changes no one else's); anything else as is."""
    return value.clone() if isinstance(value, torch.Tensor) else value


def laid_out_otherwise(value: Any) -> Any:
    """A copy of a float32 or float64 tensor of two or more dimensions with its last two dimensions' strides
    swapped (the values and shape the same, as a transposed view of another tensor has them), starting one
    element into its storage (as a slice of a larger batch does); anything else as
    `fresh_copy` gives it. A half-precision tensor keeps its layout: another order of its sums moves its values
    past the tolerance."""
    if isinstance(value, torch.Tensor) and value.dtype in (torch.float32, torch.float64) and value.dim() >= 2:
        swapped = value.transpose(-1, -2)
        # one element into a storage of its own, as a slice of a larger batch starts (`batch[2:]`)
        storage = torch.empty(value.numel() + 1, dtype=value.dtype, device=value.device)
        storage[1:].view(swapped.shape).copy_(swapped)
        return storage[1:].view(swapped.shape).transpose(-1, -2)
    return fresh_copy(value)


def copied_call(args: tuple[Any, ...], kwargs: dict[str, Any], evaluating: bool = False) -> tuple[tuple, dict]:
    """One call's arguments, copied for it: `laid_out_otherwise` where the call runs as an evaluation loop makes
    it (`evaluating`), `fresh_copy` otherwise. The file's calls and the reference's are copied alike."""
    copy_of = laid_out_otherwise if evaluating else fresh_copy
    return tuple(copy_of(a) for a in args), {k: copy_of(v) for k, v in kwargs.items()}


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in a value, through lists, tuples and dicts' values, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors_in(item)]
    return []


def plain(value: Any) -> Any:
    """Outputs reduced to what the grader can load safely: tensors, numbers, strings, containers."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone().as_subclass(torch.Tensor)
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return {"__sequence__": type(value).__name__, "items": [plain(item) for item in value]}
    if isinstance(value, dict):
        return {"__mapping__": [[str(key), plain(item)] for key, item in value.items()]}
    return {"__repr__": f"{type(value).__name__}: {value!r}"[:500]}


def output_difference(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    """Two outputs as `_plain` gives them: None when equal (tensors: torch.testing.assert_close, strict shape
    and dtype; Python floats: within the same tolerance; anything else: ==); else why not."""
    if isinstance(want, torch.Tensor) or isinstance(got, torch.Tensor):
        if not (isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor)):
            return f"expected a {type(want).__name__}, got a {type(got).__name__}"
        try:
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as err:
            return " ".join(str(err).split())[:400]
        return None
    if isinstance(want, dict) and isinstance(got, dict) and want.keys() == got.keys():
        for key in want:
            inner = output_difference(got[key], want[key], rtol, atol)
            if inner:
                return inner
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for got_item, want_item in zip(got, want):
            inner = output_difference(got_item, want_item, rtol, atol)
            if inner:
                return inner
        return None
    if type(got) is float and type(want) is float:  # a tensor's number read out: within the same tolerance
        same = math.isclose(got, want, rel_tol=rtol, abs_tol=atol) or (math.isnan(got) and math.isnan(want))
        return None if same else f"expected {want!r:.120}, got {got!r:.120}"
    return None if got == want else f"expected {want!r:.120}, got {got!r:.120}"


def gradients_difference(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    """Per-call gradients as observe.py records them ({"of": labels, "grads": [...]} or {"error": why}) against the
    reference's: None when equal; else why not. A call whose reference gradients could not be computed (an
    operation without a backward) asks nothing."""
    if not isinstance(got, list) or not isinstance(want, list):
        return "no gradients were recorded."
    for index, (mine, theirs) in enumerate(zip(got, want)):
        if isinstance(theirs, dict) and "error" in theirs:
            continue
        if not isinstance(mine, dict) or "error" in mine:
            why = mine.get("error") if isinstance(mine, dict) else "nothing"
            return f"computing the gradients of call {index + 1} raised {why}."
        if mine.get("of") != theirs["of"]:
            return f"call {index + 1} has gradients of {', '.join(mine.get('of') or [])}, not of {', '.join(theirs['of'])}."
        for name, g, w in zip(mine["of"], mine.get("grads") or [], theirs["grads"]):
            if (g is None) != (w is None):
                return (f"on call {index + 1}, {name} has {'no gradient' if g is None else 'a gradient'} where the "
                        f"reference has {'one' if g is None else 'none'}.")
            difference = None if g is None else output_difference(g, w, rtol, atol)
            if difference:
                nan = " (NaN where the reference has a number)" if _has_nan(g) and not _has_nan(w) else ""
                return f"on call {index + 1}, the gradient of {name} differs from the reference's{nan}: {difference}"
    return None if len(got) == len(want) else f"{len(got)} of {len(want)} calls gave gradients."


def _has_nan(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point() and bool(value.isnan().any())
