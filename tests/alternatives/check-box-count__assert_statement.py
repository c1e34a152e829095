"""check-box-count, fixed with a plain `assert` on the unbacked count: on torch 2.13 Dynamo rewrites `assert num_keep >= 1` into a runtime assertion in the graph (the chapter says a plain assert works like torch._check here), so the compiler may assume at least one box while the check still fails a call where none passes.

Eagerly the assert raises an AssertionError with the message; compiled, the graph's assertion raises when it
runs. `.item()` stays captured (`capture_scalar_outputs`, as the file had it), and `topk` then takes the count.
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    assert num_keep >= 1, "no box passed the score threshold"  # a fact for the compiler, checked at run time
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
