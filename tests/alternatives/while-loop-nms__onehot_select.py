"""while-loop-nms, fixed with torch.while_loop and a one-hot selection of the best box: the loop runs while `alive.sum() > 0`, decided when the graph runs, and each round picks the best box as `one_hot @ boxes` (exactly that row, plus zeros), so every round keeps and suppresses what the Python loop did.

`while alive.any()` asked Python for a tensor's truth while tracing (GB0170). `torch.while_loop` carries
`(keep, alive)` through a body that returns new tensors of the same shapes and dtypes (no in-place update),
and reading `boxes[best]` with a 0-d index would need its value as a number, so the best box is selected with
arithmetic on a one-hot row instead.
"""

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

    def any_alive(keep: torch.Tensor, alive: torch.Tensor) -> torch.Tensor:
        return alive.sum() > 0  # a 0-d bool tensor

    def suppress_round(keep: torch.Tensor, alive: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        best = torch.where(alive, scores, -1.0).argmax()
        is_best = index == best  # [n] bool, True only at the best candidate
        best_box = is_best.to(boxes.dtype) @ boxes  # [4]: the best box's row, selected without indexing
        overlap = box_iou(best_box, boxes)
        return torch.logical_or(keep, is_best), torch.logical_and(alive, overlap <= iou_threshold)

    keep, alive = torch.while_loop(any_alive, suppress_round, (keep, alive))
    return keep
