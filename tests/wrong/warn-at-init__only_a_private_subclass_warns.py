"""warn-at-init, a wrong fix. Only a private subclass, the type of `criterion`, warns: `LabelSmoothingLoss` itself does
not: right on the draws, not what the task asks (contract warns-only-when-suspicious)
(contract warning-names-the-value) (contract warnings-that-are-shown)."""
import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


class _CheckedLabelSmoothingLoss(LabelSmoothingLoss):
    def __init__(self, smoothing: float = 0.1):
        super().__init__(smoothing)
        if smoothing > 0.3:
            warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")


criterion = _CheckedLabelSmoothingLoss(smoothing=0.4)
