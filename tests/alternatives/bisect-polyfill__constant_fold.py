"""bisect-polyfill, fixed with a polyfill Dynamo may fold: on constant arguments Dynamo calls the C function itself
while tracing; the Python body (a count of the smaller items, right for a sorted sequence) is only there for the
arguments it cannot fold.
"""

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


# can_constant_fold_through: on constant arguments (here always: the buckets and a static length), Dynamo calls
# bisect.bisect_left itself while tracing, and the Python body is traced only for other arguments.
@torch.compiler.substitute_in_graph(bisect.bisect_left, can_constant_fold_through=True)
def _bisect_left(a, x, lo=0, hi=None, *, key=None):
    hi = len(a) if hi is None else hi
    return lo + sum(1 for item in a[lo:hi] if (item if key is None else key(item)) < x)


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
