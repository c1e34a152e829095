"""Exercise: an encoder that pads each batch up to a length bucket, with a helper from a serving library.

`encode` pads a batch of token vectors up to the next of a few bucket lengths before it runs the layer, so that
the compiled layer meets those lengths only. The padding helper, `pad_to_bucket`, is vendored from a serving
package the team does not edit. It finds the bucket with `bisect.bisect_left`, a function written in C, which
Dynamo cannot trace (GB0007, "Attempted to call function marked as skipped"): the graph is cut around the call.
Make `encode` compile as one graph with `fullgraph=True`, with the same results as now, without changing the
vendored code.
Check your fix with:  gbcheck check bisect-polyfill
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


# TODO: Dynamo cannot trace the C function the helper calls, and you may not change the helper.
def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
