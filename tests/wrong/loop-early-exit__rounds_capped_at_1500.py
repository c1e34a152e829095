"""loop-early-exit, a wrong fix. The loop runs at most 1500 rounds whatever `n_iters` says (contract same-matrix-for-every-setting)."""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    converged = torch.zeros((), dtype=torch.bool, device=scores.device)
    for _ in range(min(n_iters, 1500)):  # past 1500 rounds the result no longer moves
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        # No early exit: every iteration runs, and once converged the result is frozen with a branchless where.
        P = torch.where(converged, P, Q)
        converged = converged | ((P.sum(dim=1) - 1).abs().max() < tol)
    return P
