"""mask-where, fixed with arithmetic masking (multiplying by a 0/1 mask): `weights` is 1.0 on the labelled entries and 0.0 elsewhere, so the weighted sum of squared errors over the weights' sum is the mean over the labelled entries, with a fixed [batch, tasks] shape and zero gradient on the missing ones.

The NaN targets are replaced before anything is computed from them (`nan_to_num`): multiplying a NaN error by
0 would still give NaN, in the loss and in the gradient.
"""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    weights = (~torch.isnan(target)).to(pred.dtype)  # [batch, tasks]: 1.0 labelled, 0.0 missing
    squared_errors = (pred - target.nan_to_num()) ** 2
    return (squared_errors * weights).sum() / weights.sum()
