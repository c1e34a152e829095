"""loop-early-exit, fixed with torch.cond: each of the `n_iters` iterations branches on the converged flag inside the graph, keeping the matrix once converged and normalising it otherwise, which is what the early `break` leaves.

`torch.cond` turns the data-dependent `if` into a graph operation with both branches captured, so the loop can
stay a plain Python `for` over a fixed count and still trace as one graph under `fullgraph=True`.
"""

import torch


def _frozen(P: torch.Tensor) -> torch.Tensor:
    return P.clone()  # a branch of torch.cond must not return its input itself


def _normalised(P: torch.Tensor) -> torch.Tensor:
    P = P / P.sum(dim=1, keepdim=True)
    return P / P.sum(dim=0, keepdim=True)


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    converged = torch.tensor(False, device=scores.device)
    for _ in range(n_iters):
        P = torch.cond(converged, _frozen, _normalised, (P,))
        converged = torch.logical_or(converged, (P.sum(dim=1) - 1).abs().max() < tol)
    return P
