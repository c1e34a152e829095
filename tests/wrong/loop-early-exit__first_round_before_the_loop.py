"""loop-early-exit, a wrong fix. The first round runs before the loop, so `n_iters=0` still normalises once
(contract same-matrix-for-every-setting)."""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    # The first round cannot have converged yet: run it before the loop, then the frozen rounds.
    P = scores.exp()
    P = P / P.sum(dim=1, keepdim=True)
    P = P / P.sum(dim=0, keepdim=True)
    converged = (P.sum(dim=1) - 1).abs().max() < tol
    for _ in range(n_iters - 1):
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        # No early exit: every iteration runs, and once converged the result is frozen with a branchless where.
        P = torch.where(converged, P, Q)
        converged = converged | ((P.sum(dim=1) - 1).abs().max() < tol)
    return P
