"""nonstrict-vendored, a wrong fix. The key mask is reshaped to one row per sequence of the batch, so one mask
shared by the whole batch, (1, keys), raises (contract masks-of-any-padding)."""
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

masked_softmax_graph = torch._dynamo.nonstrict_trace(masked_softmax)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # nonstrict_trace: Dynamo puts the helper in the graph as one call, traced by running its Python as is.
    weights = masked_softmax_graph(scores, key_mask.reshape(q.shape[0], 1, -1))
    return weights @ v
