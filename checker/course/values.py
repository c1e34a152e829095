"""Tensor specs, the manifest's way of writing an input, turned into the values an entry is called with.

A spec is a table such as `{randn = [4, 8], scale = 2.0}` or `{randint = [16], low = 0, high = 5}` (a float
tensor may add `requires_grad = true`); a plain
value (a number, a string) is passed as it is. The manifest validates specs and builds its examples from
them (`build_value`); fresh draws rebuild the random ones with a new seed (`build_draw`). Both live here,
below the manifest and the draws, so that neither needs the other to make a tensor.
"""

from __future__ import annotations

from typing import Any

TENSOR_MAKERS = ("randn", "rand", "ones", "zeros", "arange", "tensor", "randint", "bernoulli")
RANDOM_MAKERS = ("randn", "rand", "randint", "bernoulli")
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")


def build_value(value: Any, default_seed: int = 0) -> Any:
    """Turn one manifest argument into the Python value passed to the entry (tensors built here)."""
    if not isinstance(value, dict):
        return value
    import torch

    dtype = getattr(torch, value.get("dtype", "float32"))
    generator = torch.Generator().manual_seed(int(value.get("seed", default_seed)))
    if "tensor" in value:
        tensor = torch.tensor(value["tensor"], dtype=dtype)
    elif "arange" in value:
        tensor = torch.arange(value["arange"], dtype=dtype)
    elif "randn" in value:
        tensor = torch.randn(*value["randn"], generator=generator, dtype=dtype)
    elif "rand" in value:
        tensor = torch.rand(*value["rand"], generator=generator, dtype=dtype)
    elif "randint" in value or "bernoulli" in value:
        return build_draw(value, int(value.get("seed", default_seed)))
    else:  # ones / zeros
        maker = "ones" if "ones" in value else "zeros"
        tensor = getattr(torch, maker)(*value[maker], dtype=dtype)
    if "scale" in value:
        tensor = tensor * value["scale"]
    if "shift" in value:  # a number, or a nested list of the tensor's shape (a fixed pattern)
        tensor = tensor + torch.as_tensor(value["shift"], dtype=dtype)
    if "shift_below_diagonal" in value:  # a number added below the diagonal: the same pattern at any drawn size
        tensor = tensor + torch.full(tensor.shape[-2:], float(value["shift_below_diagonal"]), dtype=dtype).tril(-1)
    if value.get("requires_grad"):  # a leaf that autograd tracks, as in a training step
        tensor.requires_grad_()
    return tensor


# An integer range up to this wide is drawn from the list of its values (what a seed draws stays as it was); a
# wider one (a replay's positions past any table) with torch.randint, and it cannot `exclude` values.
_LISTED_AT_MOST = 1 << 17  # the widest a course draw had before (100000 ids) fits


def build_draw(spec: Any, seed: int) -> Any:
    """A value from a generator: a random spec with a fresh seed, anything else as the example has it."""
    if not isinstance(spec, dict) or not any(maker in spec for maker in RANDOM_MAKERS):
        return build_value(spec)
    import torch

    generator = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, spec.get("dtype", "float32"))
    if "randint" in spec:
        low, high = int(spec.get("low", 0)), int(spec["high"])
        if high - low > _LISTED_AT_MOST:
            if spec.get("exclude"):
                raise ValueError(f"a randint range wider than {_LISTED_AT_MOST} cannot exclude values: {spec}")
            return torch.randint(low, high, tuple(spec["randint"]), generator=generator, dtype=dtype)
        allowed = [v for v in range(low, high) if v not in spec.get("exclude", ())]
        picks = torch.randint(len(allowed), tuple(spec["randint"]), generator=generator)
        return torch.tensor(allowed, dtype=dtype)[picks]
    if "bernoulli" in spec:
        return torch.rand(*spec["bernoulli"], generator=generator) < float(spec.get("p", 0.5))
    return build_value({**spec, "seed": seed})
