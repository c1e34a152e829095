"""mask-where, fixed with `F.mse_loss(..., reduction="sum")` on masked tensors: predictions and targets are both zeroed where the label is missing, so those entries add exactly 0 to the sum (and get a zero gradient), and dividing by the labelled count gives the mean over the labelled entries that the boolean-mask version computed.

Every tensor keeps its [batch, tasks] shape, so there is no data-dependent size (GB0036). The NaN targets are
replaced by `torch.where` before `mse_loss` sees them.
"""

import torch
import torch.nn.functional as F


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    kept_pred = torch.where(labelled, pred, torch.zeros_like(pred))
    kept_target = torch.where(labelled, target, torch.zeros_like(target))  # no NaN left
    return F.mse_loss(kept_pred, kept_target, reduction="sum") / labelled.sum()
