"""bisect-polyfill, "fixed" by editing the vendored helper: a loop over the buckets finds the same one and
traces, but the task asks to leave `pad_to_bucket` as it is (contract vendored-unchanged), and a
fix that leaves it so needs an escape hatch, which this file does not use (contract escape-hatch-used)."""

import bisect

import torch
import torch.nn.functional as F

# ---- vendored from a serving utilities package: do not edit below this line ---------------------------------
BUCKETS = (8, 16, 32, 64)


def pad_to_bucket(x: torch.Tensor, buckets: tuple[int, ...] = BUCKETS) -> torch.Tensor:
    """Zero-pad dim 1 up to the smallest bucket that holds it; a longer input is left as it is."""
    index = len(buckets)
    for position, bucket in enumerate(buckets):
        if bucket >= x.shape[1]:
            index = position
            break
    target = buckets[index] if index < len(buckets) else x.shape[1]
    return F.pad(x, (0, 0, 0, target - x.shape[1]))
# ---- end of vendored code -------------------------------------------------------------------------------------


WEIGHT = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
