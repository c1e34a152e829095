"""reorder-print, a wrong fix. The norm's `1e-6` dropped: below the tolerance on every draw, NaN on a token of zeros
(contract limit-still-applies)."""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True)) * weight
    clipped = (normed.abs() > limit).sum()
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
