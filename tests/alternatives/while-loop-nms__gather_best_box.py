"""while-loop-nms, fixed with torch.while_loop and `torch.gather` for the best box: the condition `alive.any()` is evaluated by the graph on each round, and gathering the four coordinates at `best` is the same row as `boxes[best]` while `best` stays a tensor, so the kept mask is the Python loop's.

The round is a module-level helper that takes everything it reads as arguments; the loop's body passes it the
carried `(keep, alive)` and the enclosing function's tensors. Nothing is updated in place and no tensor is
read as a Python number, as `torch.while_loop` requires.
"""

import torch


def box_iou(box: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    """Intersection over union of one box [4] with each of `boxes` [n, 4]; boxes are (x1, y1, x2, y2)."""
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def nms_round(keep, alive, boxes, scores, index, iou_threshold: float):
    """One round of greedy NMS: keep the best live candidate, drop it and every box it overlaps too much."""
    best = torch.where(alive, scores, -1.0).argmax(dim=0, keepdim=True)  # [1]
    best_box = boxes.gather(0, best[:, None].expand(1, boxes.shape[1]))[0]  # [4], best stays a tensor
    return keep | (index == best), alive & (box_iou(best_box, boxes) <= iou_threshold)


def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float = 0.5) -> torch.Tensor:
    """A bool mask of the boxes kept, in the order of `boxes`."""
    index = torch.arange(scores.shape[0], device=scores.device)
    keep = torch.zeros_like(scores, dtype=torch.bool)
    alive = scores > 0.05  # candidates: every box above the score floor
    keep, _ = torch.while_loop(
        lambda keep, alive: alive.any(),
        lambda keep, alive: nms_round(keep, alive, boxes, scores, index, iou_threshold),
        (keep, alive),
    )
    return keep
