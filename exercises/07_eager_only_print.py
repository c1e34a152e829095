"""Exercise: shape-debugging prints left in an attention function.

`causal_attention` still prints the shapes it was debugged with. Under torch.compile that print is a graph break
(GB0059, "Failed to trace builtin operator"), and the compiled code has no use for it: the shapes are fixed when
the function is traced. Keep the printout when the function runs eagerly, leave it out of the compiled code, and
make `causal_attention` compile as one graph with `fullgraph=True`, without changing any config.
Check your fix with:  gbcheck check eager-only-print
"""

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    # TODO: this debugging print only makes sense while running eagerly.
    print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
