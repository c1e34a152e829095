"""nonstrict-vendored, "fixed" by a parameter named `masked_softmax` whose default is an edited copy, beside a hatch
whose result is never used: the vendored code never runs (contract vendored-called)
(contract escape-hatch-used).
Nor can the grader read which code is traced (contract no-environment-switch)."""

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


def _quiet_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim).nan_to_num(0.0)


masked_softmax_graph = torch._dynamo.nonstrict_trace(masked_softmax)


def padded_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_mask: torch.Tensor,
                     masked_softmax=_quiet_softmax) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, key_mask[:, None, :])
    return weights @ v
