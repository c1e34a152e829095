"""check-box-count, fixed with `torch._assert_async` on the count tensor before `.item()`: the check is a graph operation on a tensor, which runs (and raises) whenever the function runs, eagerly or compiled, so a call with no box above the threshold still fails, and every other call returns what the original returned.

The `if` was a decision on the unbacked count `u0`, which Dynamo cannot make while tracing (GB0170). Checked
on the 0-d count tensor instead, nothing has to be decided while tracing: `_assert_async` is an operator in the
graph, and `topk` takes the captured `.item()` (`capture_scalar_outputs`, as the file had it) as it did.
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    count = (scores > threshold).sum()  # a 0-d tensor
    torch._assert_async(count >= 1, "no box passed the score threshold")  # checked when it runs, in the graph too
    num_keep = count.item()  # a Python int when run eagerly, u0 while Dynamo traces
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
