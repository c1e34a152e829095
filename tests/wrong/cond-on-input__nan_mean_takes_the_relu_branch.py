"""cond-on-input, a wrong fix. The branch asks `~(h.mean() <= 0)`: a NaN mean takes the relu branch, where the unfixed
code took tanh (contract branch-of-a-nan-mean)."""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    # torch.cond traces both branches into the graph and picks one at run time.
    return torch.cond(
        ~(h.mean() <= 0),
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h),
    )
