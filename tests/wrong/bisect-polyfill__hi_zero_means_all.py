"""bisect-polyfill, a wrong fix. The polyfill reads `hi = hi or len(a)`: an explicit `hi=0`, an empty range whose
answer is `lo`, searches the whole tuple (contract polyfill-returns-what-bisect-does)."""

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
    hi = hi or len(a)
    for index in range(lo, hi):
        if (a[index] if key is None else key(a[index])) >= x:
            return index
    return hi


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
