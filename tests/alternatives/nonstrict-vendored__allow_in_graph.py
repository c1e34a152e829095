"""nonstrict-vendored, fixed with torch.compiler.allow_in_graph: Dynamo puts the call to the unchanged `masked_softmax` into the graph as it is, without tracing its Python, and its tensor operations are the vendored ones, so the weights are the same.

`allow_in_graph` fits here because the helper takes tensors (and an int) and returns a tensor, and it never
reads a tensor's value; the registration is on a wrapper, so the vendored function object stays untouched.
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


@torch.compiler.allow_in_graph
def masked_softmax_in_graph(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return masked_softmax(scores, mask)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # Dynamo records this call in the graph as it is; the backend traces the tensor operations inside.
    weights = masked_softmax_in_graph(scores, key_mask[:, None, :])
    return weights @ v
