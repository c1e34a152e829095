"""nonstrict-vendored, fixed with a `@torch._dynamo.nonstrict_trace` decorated wrapper: the wrapper's body (the call to the unchanged `masked_softmax`) is run as plain Python while its tensor operations are recorded, so the graph computes exactly the vendored weights.

The decorator sits on a thin local function rather than on the vendored helper, so the vendored code is not
touched at all, and the wrapper can fix the softmax dimension for the attention at the same time.
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


@torch._dynamo.nonstrict_trace
def attention_weights(scores: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    return masked_softmax(scores, key_mask[:, None, :], dim=-1)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # Dynamo does not trace the wrapper's Python: one step in the graph, its tensor operations recorded.
    weights = attention_weights(scores, key_mask)
    return weights @ v
