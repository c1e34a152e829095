"""check-box-count, fixed with `torch._check_with(ValueError, ...)`: the same fact as `torch._check`, stated to the compiler and checked when the graph runs, but raising the original's ValueError (with its message) when run eagerly, as the `if`/`raise` did (compiled, the graph's runtime assertion raises a RuntimeError, as with `torch._check`).

`torch._check_with` is the form of `torch._check` that takes the exception type. While Dynamo traces, the
condition on the unbacked count `u0` is recorded as a runtime assertion instead of being decided, so the
function compiles as one graph; `.item()` stays captured with `capture_scalar_outputs`.

Needs torch 2.9 or later (torch 2.8's Dynamo cannot pass an exception type to `torch._check_with`).
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    torch._check_with(ValueError, num_keep >= 1, lambda: "no box passed the score threshold")
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
