"""warn-at-init, a wrong fix. The warning is missed for smoothings of 1.0 and above: right on the draws, not what the
task asks (contract warns-only-when-suspicious) (contract warning-names-the-value)
(contract warnings-that-are-shown)."""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        if 0.3 < smoothing < 1.0:
            warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
