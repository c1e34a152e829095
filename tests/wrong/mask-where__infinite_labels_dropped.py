"""mask-where, a wrong fix. The mask is `isfinite(target)`, so an infinite label counts as missing, where only NaN
marks one (contract infinite-labels-count)."""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = torch.isfinite(target)  # [batch, tasks]: False where the label is missing
    # Fixed shape: zero the missing entries' errors instead of dropping them (NaN targets replaced first).
    errors = torch.where(labelled, pred - target.nan_to_num(), 0.0)
    return errors.pow(2).sum() / labelled.sum()
