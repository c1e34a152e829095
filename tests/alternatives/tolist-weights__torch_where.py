"""tolist-weights, fixed with torch.where: `torch.where(confidence >= threshold, 1, 0)` picks 1.0 or 0.0 for every sample at once, the same test the comprehension made on Python numbers, so the weights, the loss and its gradients are unchanged.

The weights are built from `ones_like`/`zeros_like` of the confidence, so they have its dtype and device, and,
like the Python-built tensor of the original, carry no gradient (the test is a comparison).
"""

import torch
import torch.nn.functional as F


def pseudo_label_loss(weak: torch.Tensor, strong: torch.Tensor, threshold: float = 0.9) -> torch.Tensor:
    confidence, pseudo_labels = weak.softmax(dim=-1).max(dim=-1)
    confidence = confidence.detach()  # the weights are labels, not something to train through
    weights = torch.where(confidence >= threshold, torch.ones_like(confidence), torch.zeros_like(confidence))
    losses = F.cross_entropy(strong, pseudo_labels, reduction="none")
    return (losses * weights).mean()
