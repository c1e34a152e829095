"""eager-only-print, a wrong fix. The print is guarded with `is_compiling()` as the reference's is, but the same guard
detaches the attention scores in the compiled code: eager calls train q and k, a compiled training step gives them no
gradient (contract compiled-matches)."""

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    if not torch.compiler.is_compiling():
        print("attention: scores", scores.shape, "mask", causal.shape)
    else:
        scores = scores.detach()
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
