"""cond-on-input, fixed but returning float32 whatever it is given: float64 inputs come back rounded to single
precision (contract past-the-bounds)."""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    x, weight = x.float(), weight.float()
    h = x @ weight
    # torch.cond traces both branches into the graph and picks one at run time.
    return torch.cond(
        h.mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h),
    )
