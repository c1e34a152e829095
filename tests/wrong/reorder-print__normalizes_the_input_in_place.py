"""reorder-print, a wrong fix. The caller's `x` is normalized in place: right on the draws, not what the task asks
(contract eager-matches) (contract compiled-matches) (contract limit-still-applies)."""
import torch

torch._dynamo.config.reorderable_logging_functions.add(print)


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x.mul_(torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)).mul_(weight)
    clipped = (normed.abs() > limit).sum()
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
