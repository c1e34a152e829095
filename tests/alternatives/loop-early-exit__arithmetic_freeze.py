"""loop-early-exit, fixed with arithmetic masking: a 0/1 float flag blends the old and the new matrix (`done * P + (1 - done) * Q`), which picks one of them exactly, so every iteration after convergence leaves the matrix as the early `break` left it.

Multiplying finite values by exactly 0 or 1 and adding 0 is exact in floating point, so the result is bit for
bit the matrix of the early-exit loop; the loop runs its `n_iters` iterations, unrolled into one graph.
"""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    P = scores.exp()
    done = torch.zeros((), dtype=P.dtype, device=P.device)  # 1.0 once the row sums have converged
    for _ in range(n_iters):
        Q = P / P.sum(dim=1, keepdim=True)
        Q = Q / Q.sum(dim=0, keepdim=True)
        P = done * P + (1 - done) * Q
        converged_now = ((P.sum(dim=1) - 1).abs().max() < tol).to(P.dtype)
        done = torch.maximum(done, converged_now)  # stays 1.0 once set
    return P
