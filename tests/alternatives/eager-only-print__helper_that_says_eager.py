"""eager-only-print, fixed with a module-level helper whose one statement returns `not torch.compiler.is_compiling()`,
called in the `if` that guards the print.
"""

import torch


def running_eagerly() -> bool:
    """False while Dynamo traces: debugging output is for eager runs only."""
    return not torch.compiler.is_compiling()


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    if running_eagerly():
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
