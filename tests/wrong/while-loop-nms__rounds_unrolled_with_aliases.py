"""while-loop-nms, "fixed" with the first three rounds unrolled while Dynamo traces, a while_loop for the rest: it
passes the draws, not the task (contract rounds-at-run-time)."""

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
    alive = scores > 0.05  # candidates: every box above the score floor
    areas = torch.subtract(boxes[:, 2:], boxes[:, :2]).prod(dim=1)  # `subtract`: not counted with the rounds' `sub`

    def one_round(keep, alive):
        best = torch.where(alive, scores, -1.0).argmax().reshape(1)
        best_box = boxes.index_select(0, best).squeeze(0)
        inter = (torch.minimum(best_box[2:], boxes[:, 2:]) - torch.maximum(best_box[:2], boxes[:, :2])).clamp(min=0)
        inter = inter.prod(dim=1)
        iou = inter / (areas.index_select(0, best) + areas - inter)
        found = alive.any()
        return keep | ((index == best) & found), alive & (iou <= iou_threshold)

    for _ in range(3):  # unrolled while tracing
        keep, alive = one_round(keep, alive)

    def candidates_left(keep, alive):
        return alive.any()

    keep, _ = torch.while_loop(candidates_left, one_round, (keep, alive))
    return keep
