"""capture-item, fixed with capture_scalar_outputs and an explicit torch.sym_max: with the option on, `.item()` is a symbolic float in the graph, and torch.sym_max is the symbolic-number form of `max` (plain `max` on Python floats when run eagerly), so the floor of 1.0 and the division stay in the graph with the same values.

`masked_mse` averages a sequence model's squared error over the positions a padding mask keeps, and guards
against a batch that is all padding. The kept count is still read with `.item()`.
"""

import torch
import torch._dynamo.config as dynamo_config

dynamo_config.capture_scalar_outputs = True  # read when the function is compiled: set at import


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(pred.dtype)  # [batch, seq]: 1 for real tokens, 0 for padding
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    kept = mask.sum().item()  # a symbolic float under torch.compile
    return squared_error.sum() / torch.sym_max(kept, 1.0)
