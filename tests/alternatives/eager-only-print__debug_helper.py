"""eager-only-print, fixed with a module-level debugging helper that returns early while compiling: `debug_shapes` checks torch.compiler.is_compiling() first, which Dynamo reads as the constant True, so the print is never traced, while eager runs print the same line as before.

`causal_attention` still prints the shapes it was debugged with. The guard lives in one helper that any other
function being debugged can call too; the attention code itself is unchanged.
"""

import torch


def debug_shapes(*parts: object) -> None:
    """Print `parts` in eager runs; do nothing in code torch.compile traces."""
    if torch.compiler.is_compiling():
        return
    print(*parts)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    debug_shapes("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
