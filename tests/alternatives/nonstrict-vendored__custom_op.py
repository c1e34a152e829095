"""nonstrict-vendored, fixed with a custom operator: `torch.library.custom_op` wraps the unchanged `masked_softmax`, so Dynamo records one opaque call whose kernel runs the vendored Python (warnings filter included) on every call and returns exactly its weights.

A fake implementation gives Dynamo the output's shape and dtype, and `register_autograd` gives the softmax
derivative (zero wherever the weights are zero: masked keys and fully masked rows), so training through the
operator gets the same gradients as the vendored function.
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


@torch.library.custom_op("gbalt_vendored::masked_softmax", mutates_args=())
def masked_softmax_op(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return masked_softmax(scores, mask)


@masked_softmax_op.register_fake
def _(scores, mask):
    return torch.empty(torch.broadcast_shapes(scores.shape, mask.shape), dtype=scores.dtype, device=scores.device)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)


def _backward(ctx, grad):
    (weights,) = ctx.saved_tensors
    # softmax backward over the last dim; the zeroed weights give zero gradients where the vendored code's do
    return weights * (grad - (grad * weights).sum(dim=-1, keepdim=True)), None


masked_softmax_op.register_autograd(_backward, setup_context=_setup_context)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    # One opaque operator in the graph: its Python runs at every call, outside Dynamo's tracing.
    weights = masked_softmax_op(scores, key_mask[:, None, :])
    return weights @ v
