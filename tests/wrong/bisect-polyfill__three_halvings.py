"""bisect-polyfill, a wrong fix. A binary search unrolled to three halvings: exact up to seven buckets
(contract polyfill-returns-what-bisect-does)."""

import bisect

import torch
import torch.nn.functional as F

BUCKETS = (8, 16, 32, 64)


def pad_to_bucket(x: torch.Tensor, buckets: tuple[int, ...] = BUCKETS) -> torch.Tensor:
    """Zero-pad dim 1 up to the smallest bucket that holds it; a longer input is left as it is."""
    index = bisect.bisect_left(buckets, x.shape[1])
    target = buckets[index] if index < len(buckets) else x.shape[1]
    return F.pad(x, (0, 0, 0, target - x.shape[1]))


WEIGHT = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4


@torch.compiler.substitute_in_graph(bisect.bisect_left)
def _bisect_left(a, x, lo=0, hi=None, *, key=None):
    hi = len(a) if hi is None else hi
    for _ in range(3):
        if lo < hi:
            mid = (lo + hi) // 2
            if (a[mid] if key is None else key(a[mid])) < x:
                lo = mid + 1
            else:
                hi = mid
    return lo


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
