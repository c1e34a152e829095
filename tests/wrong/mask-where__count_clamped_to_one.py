"""mask-where, "fixed" with the count clamped to at least one: a batch without labels gives 0, not the mean of
nothing
(contract mean-over-the-labelled-entries)."""


import torch


def masked_regression_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    labelled = ~torch.isnan(target)  # [batch, tasks]: False where the label is missing
    # Fixed shape: zero the missing entries' errors instead of dropping them (NaN targets replaced first).
    errors = torch.where(labelled, pred - target.nan_to_num(), 0.0)
    return errors.pow(2).sum() / labelled.sum().clamp(min=1)
