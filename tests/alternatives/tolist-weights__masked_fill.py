"""tolist-weights, fixed with masked_fill: a tensor of zeros with 1.0 written where `confidence >= threshold` holds is the weight vector the comprehension built from Python numbers, computed on all samples at once, so the loss and its gradients are unchanged.

`confident` is a bool tensor of the same shape as the confidence; `new_zeros(...).masked_fill(confident, 1.0)`
stays a tensor operation from start to end, so Dynamo never needs a value it does not have (GB0109).
"""

import torch
import torch.nn.functional as F


def confidence_weights(confidence: torch.Tensor, threshold: float) -> torch.Tensor:
    """1.0 for every sample whose confidence reaches `threshold`, 0.0 for the others."""
    confident = confidence >= threshold
    return confidence.new_zeros(confidence.shape).masked_fill(confident, 1.0)


def pseudo_label_loss(weak: torch.Tensor, strong: torch.Tensor, threshold: float = 0.9) -> torch.Tensor:
    confidence, pseudo_labels = weak.softmax(dim=-1).max(dim=-1)
    weights = confidence_weights(confidence, threshold)
    losses = F.cross_entropy(strong, pseudo_labels, reduction="none")
    return (losses * weights).mean()
