"""bisect-polyfill, a wrong fix. The polyfill hands every call with `lo`, `hi` or `key` back to `_bisect.bisect_left`:
right eagerly, where that is the C function, but compiled the call is polyfilled again and Dynamo recurses until
torch.compile raises (contract polyfill-returns-what-bisect-does)."""

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


# A polyfill: while tracing, Dynamo runs this Python twin of the C function wherever it is called (the vendored
# helper included); outside torch.compile, bisect.bisect_left itself still runs.
@torch.compiler.substitute_in_graph(bisect.bisect_left)
def _bisect_left(a, x, lo=0, hi=None, *, key=None):
    if lo or hi is not None or key is not None:  # bounds and keys: left to the C function itself
        return _bisect.bisect_left(a, x, lo, len(a) if hi is None else hi, key=key)
    for index in range(len(a)):
        if a[index] >= x:
            return index
    return len(a)


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
