"""Exercise: a regression loss that drops missing labels with a boolean mask.

`masked_regression_loss` scores a multi-task regression head whose targets have gaps: a missing label is NaN.
It keeps the labelled entries with boolean-mask indexing, `pred[labelled]`, whose output has as many elements
as the mask has True values: a shape that depends on the data. In default mode that is a graph break
(GB0036, "Dynamic shape operator"). Make the loss compile as one graph, without changing any config, with the
same results as now, and keep its gradients right (it is a training loss).
Check your fix with:  gbcheck check mask-where
"""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    # Fixed shape: zero the missing entries' errors instead of dropping them (NaN targets replaced first).
    errors = torch.where(labelled, pred - target.nan_to_num(), 0.0)
    return errors.pow(2).sum() / labelled.sum()
