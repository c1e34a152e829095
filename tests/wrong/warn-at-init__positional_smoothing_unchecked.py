"""warn-at-init, a wrong fix. Only a smoothing passed by keyword is checked: `LabelSmoothingLoss(0.6)` warns of nothing
(contract warns-only-when-suspicious) (contract warning-names-the-value) (contract warnings-that-are-shown)."""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, *args: float, **kwargs: float):
        super().__init__()
        smoothing = kwargs.get("smoothing", args[0] if args else 0.1)
        if "smoothing" in kwargs and smoothing > 0.3:
            warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
