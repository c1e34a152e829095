"""loop-early-exit, a wrong fix. The convergence test reads the first 5 row sums: a larger matrix stops early
(contract same-matrix-for-every-setting) (contract replay-matches, on most draws); a draw whose rows converge
later than the first five also fails (contract eager-matches, on some draws)
(contract compiled-matches, on some draws)."""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    converged = torch.zeros((), dtype=torch.bool, device=scores.device)
    for _ in range(n_iters):
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        # No early exit: every iteration runs, and once converged the result is frozen with a branchless where.
        P = torch.where(converged, P, Q)
        converged = converged | ((P.sum(dim=1)[:5] - 1).abs().max() < tol)
    return P
