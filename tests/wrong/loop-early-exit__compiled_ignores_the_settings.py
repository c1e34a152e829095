"""loop-early-exit, a wrong fix. Compiled, the loop runs with the default `n_iters` and `tol` whatever it is given:
right on the draws, not what the task asks (contract same-matrix-for-every-setting)."""
import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    if torch.compiler.is_compiling():
        n_iters, tol = 20, 1e-3
    P = scores.exp()
    converged = torch.zeros((), dtype=torch.bool, device=scores.device)
    for _ in range(n_iters):
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        P = torch.where(converged, P, Q)
        converged = converged | ((P.sum(dim=1) - 1).abs().max() < tol)
    return P
