"""capture-item, fixed with capture_scalar_outputs, torch.where masking and an integer count: zeroing the padded positions with torch.where and counting the kept ones with count_nonzero().item() (a symbolic int in the graph) give the same masked sum and the same divisor, since a count of 0 is floored to 1 either way.

`masked_mse` averages a sequence model's squared error over the positions a padding mask keeps, and guards
against a batch that is all padding. The kept count is still read with `.item()`.
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    keep = mask.bool()  # [batch, seq]: True for real tokens, False for padding
    per_position = ((pred - target) ** 2).mean(dim=-1)
    squared_error = torch.where(keep, per_position, torch.zeros_like(per_position))
    kept = keep.count_nonzero().item()  # an int, symbolic under torch.compile
    return squared_error.sum() / max(kept, 1)
