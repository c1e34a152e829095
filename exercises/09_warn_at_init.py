"""Exercise: a loss module that re-checks a fixed setting on every batch.

`LabelSmoothingLoss.forward` warns when the label smoothing is unusually large. The setting is fixed when the
module is built, yet the check runs on every call, and under torch.compile `warnings.warn` is a graph break
(GB0007, "Attempted to call function marked as skipped"). Make the forward pass compile as one graph with
`fullgraph=True`, with the same results, and still warn anyone who builds the loss with a suspicious value.
Check your fix with:  gbcheck check warn-at-init
"""

import warnings

import torch
import torch.nn.functional as F


class LabelSmoothingLoss(torch.nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # TODO: this check gives the same answer on every call, and `warnings.warn` breaks the graph.
        if self.smoothing > 0.3:
            warnings.warn(f"label smoothing {self.smoothing} is unusually large; 0.0 to 0.2 is typical")
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing)


criterion = LabelSmoothingLoss(smoothing=0.4)
