"""warn-at-init, fixed, but the warning rounds the value to one decimal: a smoothing of 0.45 is reported as 0.5
(contract warning-names-the-value)."""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        # The setting is fixed from here on, so it is checked once, here, instead of in every forward call.
        if smoothing > 0.3:
            warnings.warn(f"label smoothing {smoothing:.1f} is unusually large; 0.0 to 0.2 is typical")
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
