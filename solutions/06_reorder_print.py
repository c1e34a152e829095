"""Exercise: a normalisation layer that prints how many activations it clipped.

`clipped_rms_norm` RMS-normalises each token, clamps the result to [-limit, limit] and prints how many values it
had to clip, a number the training logs are searched for. `print` is a graph break (GB0059, "Failed to trace
builtin operator"). Keep the printout, with the same text under torch.compile, and compile the function as one
graph with `fullgraph=True`.
Check your fix with:  gbcheck check reorder-print
"""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)  # .add keeps what other code put in the set


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    # A reorderable print runs after the graph, with the tensor values the graph computed.
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
