"""loop-early-exit, fixed with torch.while_loop: the loop condition carries the convergence test, so the loop stops after exactly the iteration the early `break` stopped after, with no Python `if` on a tensor.

The carried state is (iteration count, matrix, converged flag); `torch.while_loop` captures the condition and the
body as subgraphs, so `fullgraph=True` gets one graph, and unlike a fixed-length loop it really stops early.
"""

import torch


def sinkhorn(scores: torch.Tensor, n_iters: int = 20, tol: float = 1e-3) -> torch.Tensor:
    def keep_going(i, P, converged):
        return (i < n_iters) & ~converged

    def step(i, P, converged):
        P = P / P.sum(dim=1, keepdim=True)
        P = P / P.sum(dim=0, keepdim=True)
        return i + 1, P, (P.sum(dim=1) - 1).abs().max() < tol

    start = (
        torch.zeros((), dtype=torch.int64, device=scores.device),
        scores.exp(),
        torch.zeros((), dtype=torch.bool, device=scores.device),
    )
    _, P, _ = torch.while_loop(keep_going, step, start)
    return P
