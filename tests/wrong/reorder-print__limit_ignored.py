"""reorder-print, a wrong fix. The `limit` argument is ignored: wrong on the draws, whose limit each check draws,
(contract eager-matches) (contract compiled-matches) (contract replay-matches) (contract prints-preserved) and not
what the task asks (contract limit-still-applies) (contract prints-for-a-batch-of-sequences)."""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)

LIMIT = 2.5


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > LIMIT).sum()
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-LIMIT, LIMIT)
