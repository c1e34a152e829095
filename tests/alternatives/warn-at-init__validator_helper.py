"""warn-at-init, fixed with a module-level validator called from __init__: `checked_smoothing` warns on a suspicious value and returns it unchanged, and since `__init__` is the only place the setting is made, the warning comes once per construction, never from `forward`.

`LabelSmoothingLoss.forward` used to re-check a setting that is fixed when the module is built. The validator is
an ordinary function that config loaders or other losses can reuse.
"""

import warnings

import torch
import torch.nn.functional as F


def checked_smoothing(smoothing: float) -> float:
    """`smoothing`, after warning when it is larger than label smoothing usually is."""
    if smoothing > 0.3:
        warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical", stacklevel=3)
    return smoothing


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = checked_smoothing(smoothing)

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
