"""warn-at-init, "fixed" by moving the warning to `__init__` with a bound of its own, `smoothing >= 0.4` instead of
the shipped `> 0.3`: the forward pass compiles as one graph and the loss built with 0.4 still warns once, but a
smoothing of 0.31, which the shipped code reports as suspicious, now builds without a warning
(contract warns-only-when-suspicious)."""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        # The setting is fixed from here on, so it is checked once, here, instead of in every forward call.
        if smoothing >= 0.4:
            warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
