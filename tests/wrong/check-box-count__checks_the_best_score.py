"""check-box-count, "fixed" with a `torch._check` that states a fact about the best score, `scores.max() > 0.45`,
instead of about the count of boxes that pass the threshold: the function compiles as one graph with `.item()` and
raises when every score is at most 0.45, but a best score above 0.45 and not above the threshold (0.5) passes the
check with no box kept, where the task asks for a check that at least one box passed (contract raises-without-boxes)."""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    # torch._check records the fact in the graph as a runtime assertion instead of deciding it while tracing.
    torch._check(scores.max().item() > 0.45)  # no message: torch 2.8 breaks the graph on a message function
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
