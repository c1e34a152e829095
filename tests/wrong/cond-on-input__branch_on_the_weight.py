"""cond-on-input, a wrong fix. The branch is decided from the weight alone: right on the draws, not what the task asks
(contract branch-on-the-input) (contract branch-of-a-nan-mean) (contract inputs-of-any-rank)."""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    return torch.cond(
        weight.mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h),
    )
