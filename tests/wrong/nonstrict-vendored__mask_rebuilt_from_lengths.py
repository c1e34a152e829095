"""nonstrict-vendored, a wrong fix. The vendored function handed a mask rebuilt from lengths, as if padding were always
on the right (contract masks-of-any-padding) (contract queries-of-another-length)."""
import math
import warnings

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over `dim` ignoring positions where `mask` is False; a fully masked row gives zeros."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # keep callers' logs quiet on every torch version
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return weights.nan_to_num(0.0)


masked_softmax_graph = torch._dynamo.nonstrict_trace(masked_softmax)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    lengths = key_mask.sum(dim=-1, keepdim=True)
    keys = torch.arange(key_mask.shape[-1], device=key_mask.device) < lengths
    weights = masked_softmax_graph(scores, keys[:, None, :])
    return weights @ v
