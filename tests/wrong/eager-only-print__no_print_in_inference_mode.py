"""eager-only-print, a wrong fix. The shapes are printed only outside inference mode
(contract prints-in-inference-mode)."""

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    # Debugging output for eager runs only: while Dynamo traces, is_compiling() is True and the print is skipped.
    if not torch.compiler.is_compiling() and not torch.is_inference_mode_enabled():
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
