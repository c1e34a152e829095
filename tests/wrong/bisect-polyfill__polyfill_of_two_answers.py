"""bisect-polyfill, "fixed" with a polyfill of `bisect.bisect_left` that only answers "the first bucket" or "past the
last": right for the drawn lengths, not for a length of 20, nor past the buckets the vendored code compares with
(contract past-the-bounds) (contract polyfill-returns-what-bisect-does)."""


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


@torch.compiler.substitute_in_graph(bisect.bisect_left)
def _bisect_left(a, x, lo=0, hi=None, *, key=None):
    # Right for the lengths the check draws (5, 8: first bucket; 70: past the last), wrong in between.
    hi = len(a) if hi is None else hi
    return lo if x <= a[lo] else hi


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
