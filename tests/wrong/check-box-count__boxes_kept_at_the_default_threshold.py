"""check-box-count, a wrong fix. The check that some box passes is made at the caller's threshold, but the boxes are
selected at 0.5 whatever threshold is passed (contract eager-matches)
(contract compiled-matches) (contract replay-matches)."""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    passed = (scores > threshold).sum().item()
    torch._check(passed >= 1, lambda: "no box passed the score threshold")
    num_keep = (scores > 0.5).sum().item()
    torch._check(num_keep >= 1, lambda: "no box passed the score threshold")
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
