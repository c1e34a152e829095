"""Exercise: a detection head that checks how many boxes it keeps.

`top_detections` keeps the boxes whose score passes a threshold, best first, weighted by their scores. It counts
them with `.item()`, captured in the graph for the whole process as the exercise's premise (your own code would
scope it to the calls, in `with torch._dynamo.config.patch(capture_scalar_outputs=True):`). Traced, the count is an
unbacked symbol (`u0`), and Dynamo cannot decide the sanity check's `if` on it: default mode breaks there (GB0170),
`fullgraph=True` stops with "Could not guard on data-dependent expression". Make `top_detections` compile as one
graph, in default mode too, still checking that at least one box passed, with the same results as now.
Check your fix with:  gbcheck check check-box-count
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    # TODO: Dynamo cannot decide this `if` on an unbacked symbol.
    if num_keep < 1:
        raise ValueError("no box passed the score threshold")
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
