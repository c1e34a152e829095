"""warn-at-init, "fixed" without the warning, and a module-level `type` of the file's own that the course's expression
would otherwise call: the expression's builtins are Python's (contract warns-only-when-suspicious)
(contract warning-names-the-value) (contract warnings-that-are-shown)."""

import warnings

import torch
import torch.nn.functional as F


def _check_smoothing(smoothing: float) -> None:
    if smoothing > 0.3:
        warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing  # no check here

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


def type(obj):  # noqa: A001 - shadows the builtin for anything evaluated in this module's namespace
    def build(smoothing: float = 0.1) -> LabelSmoothingLoss:
        _check_smoothing(smoothing)
        return LabelSmoothingLoss(smoothing)
    return build


criterion = LabelSmoothingLoss(smoothing=0.4)
_check_smoothing(criterion.smoothing)  # the one warning seen at import
