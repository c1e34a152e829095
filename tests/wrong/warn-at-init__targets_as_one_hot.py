"""warn-at-init, a wrong fix. The targets are given to cross-entropy as one-hot probabilities, so a padding target
(-100, which cross-entropy ignores) and the logits of a batch of sequences raise (contract default-smoothing)."""
import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        # The setting is fixed from here on, so it is checked once, here, instead of in every forward call.
        if smoothing > 0.3:
            warnings.warn(f"label smoothing {smoothing} is unusually large; 0.0 to 0.2 is typical")
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, F.one_hot(target, logits.shape[-1]).to(logits.dtype), label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
