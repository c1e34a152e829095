"""warn-at-init, fixed with a validating property setter: the check moves from `forward` into the setter of `smoothing`, which runs once when `__init__` assigns the value (and again only if someone reassigns it), so building the loss with 0.4 warns exactly once and `forward` is a plain cross_entropy call.

`LabelSmoothingLoss.forward` used to re-check a setting that is fixed when the module is built. The property
reads back the stored float, which Dynamo treats as a constant like the plain attribute before.
"""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing  # validated by the setter below

    @property
    def smoothing(self) -> float:
        return self._smoothing

    @smoothing.setter
    def smoothing(self, value: float) -> None:
        if value > 0.3:
            warnings.warn(f"label smoothing {value} is unusually large; 0.0 to 0.2 is typical")
        self._smoothing = value

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
