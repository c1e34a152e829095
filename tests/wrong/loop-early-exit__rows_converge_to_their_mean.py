"""loop-early-exit, a wrong fix. Converged when the row sums are within `tol` of their mean, not of 1: right for square
matrices alone (contract same-matrix-for-every-setting)."""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    converged = torch.zeros((), dtype=torch.bool, device=scores.device)
    for _ in range(n_iters):
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        # No early exit: every iteration runs, and once converged the result is frozen with a branchless where.
        P = torch.where(converged, P, Q)
        rows = P.sum(dim=1)
        converged = converged | ((rows - rows.mean()).abs().max() < tol)
    return P
