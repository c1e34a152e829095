"""warn-at-init, "fixed" by warning once when the module is imported, whatever the smoothing: the forward pass compiles
as one graph and one warning appears, but the task asks for a warning when the value is suspicious, which building
the loss with a usual value shows (contract warns-only-when-suspicious) (contract warning-names-the-value)
(contract warnings-that-are-shown)."""

import warnings

import torch
import torch.nn.functional as F

warnings.warn("label smoothing may be unusually large; 0.0 to 0.2 is typical")


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
