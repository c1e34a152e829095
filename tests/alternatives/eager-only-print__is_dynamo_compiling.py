"""eager-only-print, fixed with torch.compiler.is_dynamo_compiling(): it is True exactly while Dynamo traces the function and False when it runs eagerly, so the guarded print is left out of the graph and still runs in eager calls.

`causal_attention` still prints the shapes it was debugged with. is_dynamo_compiling() asks only about Dynamo's
tracing, the one place where the print would break the graph.
"""

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    tracing = torch.compiler.is_dynamo_compiling()  # a constant while Dynamo traces
    if not tracing:
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
