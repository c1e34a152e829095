"""Exercise: a Sinkhorn normalisation that stops as soon as it has converged.

`sinkhorn` turns a matrix of matching scores (for example between keypoints of two images) into a doubly
stochastic matrix by normalising rows and columns in turn, and leaves the loop as soon as the row sums are within
`tol` of 1. Under torch.compile, default mode captures no graph at all: the graph break on the convergence test
sits inside a `for` loop, so Dynamo gives up on the whole function and runs it eagerly (GB7000, "graph break in
loop"). Make `sinkhorn` compile as one graph with `fullgraph=True`, with the same results as now.
Check your fix with:  gbcheck check loop-early-exit
"""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    for _ in range(n_iters):
        P = P / P.sum(dim=1, keepdim=True)
        P = P / P.sum(dim=0, keepdim=True)
        # TODO: a data-dependent test inside the loop makes Dynamo skip the whole function.
        if (P.sum(dim=1) - 1).abs().max() < tol:
            break
    return P
