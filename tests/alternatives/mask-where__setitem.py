"""mask-where, fixed with filling by a boolean mask (`errors[~labelled] = 0`): assigning a scalar through a mask writes in place and keeps the [batch, tasks] shape, so the sum of squared errors over the labelled count is the mean over the labelled entries, and the zeroed entries get no gradient, as in the original.

Reading `pred[labelled]` builds a shorter tensor (a `nonzero` in disguise, GB0036); writing `errors[mask] = 0`
does not: the shape of the result is that of `errors`. NaN targets are replaced before the subtraction.
"""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    errors = pred - target.nan_to_num()
    errors[~labelled] = 0.0  # in place, fixed shape
    return (errors * errors).sum() / labelled.sum()
