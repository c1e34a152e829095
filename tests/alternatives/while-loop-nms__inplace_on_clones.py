"""while-loop-nms, fixed with torch.while_loop and in-place `|=`/`&=` on clones in the body: the graph decides `alive.any()` on each round, and the body updates fresh clones of the carried tensors in place, which leaves the carried inputs untouched (what `while_loop` requires), so each round returns what the Python loop's round computed.

The Python loop's `while alive.any()` asked for a tensor's truth while tracing (GB0170). The body keeps the
original's update style, in place, on its own copies, and selects the best box with `index_select` so that
`best` is never read as a Python number.
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

    def still_alive(keep, alive):
        return alive.any()

    def one_round(keep, alive):
        keep, alive = keep.clone(), alive.clone()  # the body's own tensors: the carried inputs stay untouched
        best = torch.where(alive, scores, -1.0).argmax()
        best_box = boxes.index_select(0, best.unsqueeze(0)).squeeze(0)
        keep |= index == best
        alive &= box_iou(best_box, boxes) <= iou_threshold  # drops `best` too: its IoU is 1
        return keep, alive

    keep, _ = torch.while_loop(still_alive, one_round, (keep, alive))
    return keep
