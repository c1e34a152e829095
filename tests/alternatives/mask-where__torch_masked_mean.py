"""mask-where, fixed with `torch.masked.mean` over the per-entry squared errors, masked by the labelled entries.
"""

import torch
import torch.nn.functional as F


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    squared_error = F.mse_loss(pred, target.nan_to_num(), reduction="none")
    return torch.masked.mean(squared_error, mask=labelled)  # the mean over the labelled entries only
