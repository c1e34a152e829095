"""tolist-weights, a wrong fix. The weights are `1 - (confidence < threshold)`: the same as `>=` on numbers, but a NaN
confidence (a weak view gone NaN) is not below the threshold, so it weighs 1 where the loop gives it 0
(contract weights-as-the-loop-computes-them)."""

import torch
import torch.nn.functional as F


def pseudo_label_loss(weak: torch.Tensor, strong: torch.Tensor, threshold: float = 0.9) -> torch.Tensor:
    confidence, pseudo_labels = weak.softmax(dim=-1).max(dim=-1)
    # The same test, element by element, as one tensor operation: no Python numbers needed.
    weights = 1 - (confidence < threshold).to(confidence.dtype)  # every sample but those below the threshold
    losses = F.cross_entropy(strong, pseudo_labels, reduction="none")
    return (losses * weights).mean()
