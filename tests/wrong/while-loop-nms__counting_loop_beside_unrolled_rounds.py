"""while-loop-nms, "fixed" with a torch.while_loop that only counts the candidates, one round each, beside the
suppression rounds unrolled while Dynamo traces (one per box, each a few operations on an overlap table built
once), with the result gated on the count. The loop's rounds differ between calls and the result follows them,
but the number of suppression rounds is still decided while Dynamo traces: the graph holds a copy of the round
for every box (contract rounds-at-run-time) (contract boxes-of-no-area)."""

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
    overlaps = torch.stack([box_iou(box, boxes) for box in boxes]) > iou_threshold  # every pair, once

    def any_left(count, left):
        return left.any()

    def drop_first(count, left):  # one round per candidate, dropping the first still alive
        first = torch.where(left, index, scores.shape[0]).argmin()
        return count + 1, left & (index != first)

    counted, _ = torch.while_loop(any_left, drop_first, (torch.zeros((), dtype=torch.long), alive.clone()))
    for _ in range(scores.shape[0]):  # the suppression rounds, one per box, unrolled while Dynamo traces
        best = torch.where(alive, scores, -1.0).argmax()
        keep = keep | ((index == best) & alive.any())
        alive = alive & ~overlaps.index_select(0, best.reshape(1)).squeeze(0) & (index != best)
    return keep & (counted == (scores > 0.05).sum())
