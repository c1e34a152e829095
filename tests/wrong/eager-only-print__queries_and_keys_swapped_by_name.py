"""eager-only-print, a wrong fix. The parameters are declared as `(k, q, v)` and swapped back in the body: right by
position, swapped when called by name (contract arguments-by-name)."""

import torch


def causal_attention(k: torch.Tensor, q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    q, k = k, q  # first argument is the queries
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    # Debugging output for eager runs only: while Dynamo traces, is_compiling() is True and the print is skipped.
    if not torch.compiler.is_compiling():
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
