"""Exercise: attention through a vendored helper that Dynamo cannot trace.

`padded_attention` uses `masked_softmax` from a utilities package the team vendors and does not edit. The helper
silences warnings with `warnings.catch_warnings()`, and Dynamo cannot trace the warnings machinery
(GB0007, "Attempted to call function marked as skipped"). Because the break is inside a `with` block, Dynamo
skips the helper's whole frame, and the attention is cut in two graphs around it. The helper does nothing but
tensor operations otherwise. Make `padded_attention` compile as one graph with `fullgraph=True`, with the same
results as now, without changing the vendored code.
Check your fix with:  gbcheck check nonstrict-vendored
"""

import math
import warnings

import torch


# ---- vendored from a shared utilities package: do not edit below this line ----------------------------------
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over `dim` ignoring positions where `mask` is False; a fully masked row gives zeros."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # keep callers' logs quiet on every torch version
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return weights.nan_to_num(0.0)
# ---- end of vendored code -------------------------------------------------------------------------------------


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # TODO: Dynamo cannot trace into this helper, and you may not change it.
    weights = masked_softmax(scores, key_mask[:, None, :])
    return weights @ v
