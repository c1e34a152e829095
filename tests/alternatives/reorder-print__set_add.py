"""reorder-print, fixed by adding print to reorderable_logging_functions: `.add(print)` puts the same function in the same set as assigning `{print}` does, while keeping whatever other code already registered, so Dynamo still prints the clipped count after the graph with the tensor it computed.

`clipped_rms_norm` RMS-normalises each token, clamps the result to [-limit, limit] and prints how many values it
had to clip. The chapter recommends adding to the set rather than replacing it.
"""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    # Reorderable: Dynamo runs the graph, then this print, with the `clipped` the graph computed.
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
