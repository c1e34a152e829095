"""check-box-count, a wrong fix. The boxes counted and checked against 0.5 written out, whatever `threshold` the caller
passes: with 0.95 and no box above it, it does not raise
(contract eager-matches) (contract compiled-matches) (contract replay-matches)
(contract raises-without-boxes)."""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > 0.5).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    # torch._check records the fact in the graph as a runtime assertion instead of deciding it while tracing.
    torch._check(num_keep >= 1, lambda: "no box passed the score threshold")
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
