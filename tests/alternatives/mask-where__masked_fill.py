"""mask-where, fixed with masked_fill: the error tensor keeps its [batch, tasks] shape, `masked_fill(missing, 0.0)` zeroes the missing entries (which also get a zero gradient), and dividing the sum of squares by the number of labelled entries is the mean over them, as `F.mse_loss(pred[labelled], ...)` computed.

NaN targets are replaced (`nan_to_num`) before the subtraction, so no NaN ever enters the forward or the
backward pass: a masked-out NaN error would still poison the gradient through `0 * nan`.
"""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    missing = torch.isnan(target)  # [batch, tasks]: True where the label is missing
    errors = (pred - target.nan_to_num()).masked_fill(missing, 0.0)  # fixed shape: missing entries are 0
    return errors.square().sum() / (~missing).sum()
