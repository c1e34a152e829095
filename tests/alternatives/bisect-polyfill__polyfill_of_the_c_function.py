"""bisect-polyfill, fixed with a polyfill of `_bisect.bisect_left`, the C function Dynamo's message names: the
same function as `bisect.bisect_left`, which the `bisect` module hands on from `_bisect`.
"""

import _bisect
import bisect

import torch
import torch.nn.functional as F

# ---- vendored from a serving utilities package: do not edit below this line ---------------------------------
BUCKETS = (8, 16, 32, 64)


def pad_to_bucket(x: torch.Tensor, buckets: tuple[int, ...] = BUCKETS) -> torch.Tensor:
    """Zero-pad dim 1 up to the smallest bucket that holds it; a longer input is left as it is."""
    index = bisect.bisect_left(buckets, x.shape[1])
    target = buckets[index] if index < len(buckets) else x.shape[1]
    return F.pad(x, (0, 0, 0, target - x.shape[1]))
# ---- end of vendored code -------------------------------------------------------------------------------------


WEIGHT = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4


# The C function Dynamo cannot trace is _bisect.bisect_left (what bisect.bisect_left is): give it a Python twin.
@torch.compiler.substitute_in_graph(_bisect.bisect_left)
def bisect_left_py(a, x, lo=0, hi=None, *, key=None):
    if lo < 0:
        raise ValueError("lo must be non-negative")
    if hi is None:
        hi = len(a)
    return next((i for i in range(lo, hi) if (a[i] if key is None else key(a[i])) >= x), hi)


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
