"""mask-where, a wrong fix. Under `is_compiling()`, labels of exactly 0.0 are left out of the mean: eager calls are
right, compiled ones are not (contract mean-over-the-labelled-entries)."""

import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    if torch.compiler.is_compiling():  # the training step: a label of 0.0 is padding there
        labelled = labelled & (target != 0)
    # Fixed shape: zero the missing entries' errors instead of dropping them (NaN targets replaced first).
    errors = torch.where(labelled, pred - target.nan_to_num(), 0.0)
    return errors.pow(2).sum() / labelled.sum()
