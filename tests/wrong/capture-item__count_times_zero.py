"""capture-item, "fixed" by reading the count with `.item()` and using it for nothing: the item is multiplied by zero
on its way to the output, and the loss divides by a count kept as a tensor. One graph and the same loss, but the
task asks that the count read with `.item()` is the one the loss uses (contract item-in-graph)."""

import torch

torch._dynamo.config.capture_scalar_outputs = True


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    kept = mask.sum().item()
    return squared_error.sum() / mask.sum().clamp(min=1.0) + 0 * kept
