"""Exercise: a detection head that checks how many boxes it keeps.

`top_detections` keeps the boxes whose score passes a threshold, best first, each weighted by its score. It
counts them with `.item()`, which this file captures in the graph (`capture_scalar_outputs`), so while Dynamo
traces, the count is an unbacked symbol (`u0`): a number it knows nothing about. The sanity check on the count
is an `if`, and Dynamo cannot decide an `if` on such a number: default mode breaks the graph there (GB0170), and
`fullgraph=True` stops with "Could not guard on data-dependent expression". Make `top_detections` compile as one
graph, in default mode too, still checking that at least one box passed, with the same results as now.
Check your fix with:  gbcheck check check-box-count
"""

import torch

torch._dynamo.config.capture_scalar_outputs = True  # `.item()` stays in the graph, as an unbacked symbol


def top_detections(boxes: torch.Tensor, scores: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    num_keep = (scores > threshold).sum().item()  # a Python int when run eagerly, u0 while Dynamo traces
    # torch._check records the fact in the graph as a runtime assertion instead of deciding it while tracing.
    torch._check(num_keep >= 1)  # no message: this torch breaks the graph on a message function (GB0055)
    top = scores.topk(num_keep)  # the num_keep best scores, best first
    return boxes[top.indices] * top.values[:, None]
