"""eager-only-print, a wrong fix. The eager print is also guarded by `torch.is_grad_enabled()`, so evaluation prints
nothing: right on the draws, not what the task asks (contract prints-under-no-grad)
(contract prints-in-inference-mode)."""
import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    if not torch.compiler.is_compiling() and torch.is_grad_enabled():
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
