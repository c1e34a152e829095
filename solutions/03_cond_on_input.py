"""Exercise: a gated residual whose branch depends on the input's values.

`gated_residual` picks one of two updates depending on the mean activation of the batch it is given.
Under torch.compile the `if` on a tensor is a graph break (GB0170, "Data-dependent branching"): Dynamo
cannot know at trace time which side to take.

Make `gated_residual` compile as one graph with `fullgraph=True`, with the same results as now.
Check your fix with:  gbcheck check cond-on-input
"""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    # torch.cond traces both branches into the graph and picks one at run time.
    return torch.cond(
        h.mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h),
    )
