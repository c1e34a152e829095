"""cond-on-input, a wrong fix. `torch.cond` on the mean of the first row of `h`, not of the whole batch: a batch whose
rows disagree in sign takes the wrong branch (contract branch-on-the-input)
(contract inputs-of-any-rank, on most draws); the grader's own draws catch it where one of theirs has rows that
disagree (contract replay-matches, on some draws)."""

import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    # torch.cond traces both branches into the graph and picks one at run time.
    return torch.cond(
        h[0].mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: x - torch.tanh(h),
        (x, h),
    )
