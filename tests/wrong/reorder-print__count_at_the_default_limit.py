"""reorder-print, a wrong fix. The printed count is taken at the default limit of 2.5, whatever limit the caller
passes; the output is clipped at the caller's limit (contract prints-preserved)
(contract prints-for-a-batch-of-sequences)."""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > 2.5).sum()
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
