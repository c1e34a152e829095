"""cond-on-input, fixed with torch.where: the 0-dim condition `h.mean() > 0` broadcasts over both updates, so torch.where computes both cheap branches in the graph and picks, at run time, the one the `if` would have returned.

`gated_residual` picks one of two updates depending on the mean activation of the batch it is given. Both
branches are elementwise and cheap, so the branchless rewrite the chapter mentions fits.
"""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    # Both updates are computed; the 0-dim condition, evaluated when the graph runs, selects one of them whole.
    return torch.where(h.mean() > 0, x + torch.relu(h), x - torch.tanh(h))
