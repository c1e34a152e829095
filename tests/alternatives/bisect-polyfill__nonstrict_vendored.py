"""bisect-polyfill, fixed with `torch._dynamo.nonstrict_trace` on the vendored helper: a decorator, so its code stays as
it ships. Dynamo does not trace into `pad_to_bucket` (nor into `bisect.bisect_left`); the graph calls it as one step,
and the shape it reads while compiling is a plain int, so the padding it returns has a shape Dynamo knows.

`encode` pads a batch of token vectors up to the next of a few bucket lengths, with the vendored helper unedited.
"""

import bisect

import torch
import torch.nn.functional as F

# ---- vendored from a serving utilities package: do not edit below this line ---------------------------------
BUCKETS = (8, 16, 32, 64)


@torch._dynamo.nonstrict_trace  # a decorator: the vendored code itself is unchanged
def pad_to_bucket(x: torch.Tensor, buckets: tuple[int, ...] = BUCKETS) -> torch.Tensor:
    """Zero-pad dim 1 up to the smallest bucket that holds it; a longer input is left as it is."""
    index = bisect.bisect_left(buckets, x.shape[1])
    target = buckets[index] if index < len(buckets) else x.shape[1]
    return F.pad(x, (0, 0, 0, target - x.shape[1]))
# ---- end of vendored code -------------------------------------------------------------------------------------


WEIGHT = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
