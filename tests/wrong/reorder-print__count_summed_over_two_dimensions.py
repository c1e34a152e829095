"""reorder-print, a wrong fix. The clipped count is summed over the first and last dimensions: a batch of sequences
prints a count per token (contract prints-for-a-batch-of-sequences)."""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)  # .add keeps what other code put in the set


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum(dim=(0, -1))
    # A reorderable print runs after the graph, with the tensor values the graph computed.
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
