"""capture-item, "fixed" without `.item()`: the count stays a tensor. Same loss, but the task asks that the
count is still read with `.item()` (contract item-in-graph), which in one graph needs the option this file
leaves off (contract scalar-capture-on)."""

import torch


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    return squared_error.sum() / mask.sum().clamp(min=1.0)
