"""while-loop-nms, "fixed" by unrolling one round per box while Dynamo traces, beside a `torch.while_loop` that runs
one round on every call and gates the result: the loop is on the output's path, but the rounds are the same
whatever the input, decided while Dynamo traced (contract rounds-at-run-time)."""

import torch


def box_iou(box: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    """Intersection over union of one box [4] with each of `boxes` [n, 4]; boxes are (x1, y1, x2, y2)."""
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def _not_started(step):
    return step < 1


def _one_step(step):
    return (step + 1,)


def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float = 0.5) -> torch.Tensor:
    """A bool mask of the boxes kept, in the order of `boxes`."""
    index = torch.arange(scores.shape[0], device=scores.device)
    keep = torch.zeros_like(scores, dtype=torch.bool)
    alive = scores > 0.05  # candidates: every box above the score floor
    (ran,) = torch.while_loop(_not_started, _one_step, (torch.zeros((), dtype=torch.long),))
    for _ in range(scores.shape[0]):  # at most one round per box, unrolled while tracing
        any_left = alive.any()
        best = torch.where(alive, scores, -1.0).argmax()
        keep = keep | ((index == best) & any_left)
        best_box = boxes.index_select(0, best.reshape(1)).squeeze(0)
        alive = alive & (box_iou(best_box, boxes) <= iou_threshold)
    return keep & (ran > 0)
