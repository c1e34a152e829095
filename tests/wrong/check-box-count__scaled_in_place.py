"""check-box-count, a wrong fix. The gathered boxes are scaled in place (`mul_`): the same for float boxes, but boxes
in integer pixels cannot hold the float product, and the call raises where the original returns float boxes
(contract checks-at-the-default-threshold)."""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    # torch._check records the fact in the graph as a runtime assertion instead of deciding it while tracing.
    torch._check(num_keep >= 1, lambda: "no box passed the score threshold")
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices].mul_(top.values[:, None])  # the gather is a copy: scale it in place
