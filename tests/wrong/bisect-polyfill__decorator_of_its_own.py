"""bisect-polyfill, "fixed" by a decorator of the file's own on the vendored function, which hands back other
code in its place, beside `allow_in_graph` on a function of torch's, where it changes nothing: the vendored code
no longer runs as shipped (contract vendored-unchanged) and no hatch takes effect (contract escape-hatch-used)."""

import bisect

import torch
import torch.nn.functional as F


def _traceable(vendored):
    """Same signature as the vendored helper; finds the bucket with a loop Dynamo traces."""
    def pad(x: torch.Tensor, buckets: tuple[int, ...] = (8, 16, 32, 64)) -> torch.Tensor:
        target = x.shape[1]
        for bucket in buckets:
            if bucket >= x.shape[1]:
                target = bucket
                break
        return F.pad(x, (0, 0, 0, target - x.shape[1]))
    return pad


# ---- vendored from a serving utilities package: do not edit below this line ---------------------------------
BUCKETS = (8, 16, 32, 64)


@_traceable
def pad_to_bucket(x: torch.Tensor, buckets: tuple[int, ...] = BUCKETS) -> torch.Tensor:
    """Zero-pad dim 1 up to the smallest bucket that holds it; a longer input is left as it is."""
    index = bisect.bisect_left(buckets, x.shape[1])
    target = buckets[index] if index < len(buckets) else x.shape[1]
    return F.pad(x, (0, 0, 0, target - x.shape[1]))
# ---- end of vendored code -------------------------------------------------------------------------------------


WEIGHT = torch.randn(16, 16, generator=torch.Generator().manual_seed(0)) / 4

torch.compiler.allow_in_graph(torch.tanh)


def encode(tokens: torch.Tensor) -> torch.Tensor:
    padded = pad_to_bucket(tokens)
    return torch.tanh(padded @ WEIGHT)
