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
    # TODO: this `if` reads a tensor value, so Dynamo breaks the graph here.
    if h.mean() > 0:
        return x + torch.relu(h)
    return x - torch.tanh(h)
