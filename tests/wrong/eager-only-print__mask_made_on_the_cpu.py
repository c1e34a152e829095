"""eager-only-print, a wrong fix. The causal mask is made on the CPU whatever the device of `q`, so queries, keys
and values on another device raise (contract on-the-inputs-device)."""
import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    # Debugging output for eager runs only: while Dynamo traces, is_compiling() is True and the print is skipped.
    if not torch.compiler.is_compiling():
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
