"""loop-early-exit, a wrong fix. The row normalisers detached: the same matrix, another gradient, which a plain sum of
a normalised matrix hides (contract eager-matches)
(contract compiled-matches)."""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    converged = torch.zeros((), dtype=torch.bool, device=scores.device)
    for _ in range(n_iters):
        Q = P / P.sum(dim=1, keepdim=True).detach()
        Q = Q / Q.sum(dim=0, keepdim=True)
        P = torch.where(converged, P, Q)
        converged = converged | ((P.sum(dim=1) - 1).abs().max() < tol)
    return P
