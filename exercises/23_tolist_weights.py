"""Exercise: pseudo-labels chosen in a Python loop over `.tolist()`.

`pseudo_label_loss` trains a classifier on unlabelled images the FixMatch way: the prediction on a weakly
augmented view (`weak`, logits) becomes the label for a strongly augmented view (`strong`), but only where the
model is confident enough. The confidence test runs in Python over `confidence.tolist()`, and Dynamo cannot turn
a float tensor into Python numbers while tracing (GB0109, "Tensor.tolist() with non-integer tensor"). Make the
loss compile as one graph, without changing any config, with the same results as now.
Check your fix with:  gbcheck check tolist-weights
"""

import torch
import torch.nn.functional as F


def pseudo_label_loss(weak: torch.Tensor, strong: torch.Tensor, threshold: float = 0.9) -> torch.Tensor:
    confidence, pseudo_labels = weak.softmax(dim=-1).max(dim=-1)
    # TODO: `.tolist()` on a float tensor gives Python numbers, which do not exist while Dynamo traces.
    weights = torch.tensor([1.0 if c >= threshold else 0.0 for c in confidence.tolist()], device=weak.device)
    losses = F.cross_entropy(strong, pseudo_labels, reduction="none")
    return (losses * weights).mean()
