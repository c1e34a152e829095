"""cond-on-input, a wrong fix. `torch.cond` handed `h.detach()`: the same output, and no gradient for the weight
(contract eager-matches)
(contract compiled-matches)."""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    return torch.cond(
        h.mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h.detach()),
    )
