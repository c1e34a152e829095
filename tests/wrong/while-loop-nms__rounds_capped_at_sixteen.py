"""while-loop-nms, a wrong fix. The loop stops after 16 rounds, so a seventeenth box is never kept
(contract past-the-bounds, on most draws) (contract as-many-rounds-as-boxes): past the 16 its text tests, a probe's
larger inputs fail too where the seed draws one the loop cannot take."""

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

    # torch.while_loop puts the loop in the graph and tests `alive.any()` when it runs: a round is a function
    # from the carried tensors to new ones of the same shapes (no in-place update, no Python number).
    def candidates_left(keep, alive, rounds):
        return alive.any() & (rounds < 16)

    def one_round(keep, alive, rounds):
        best = torch.where(alive, scores, -1.0).argmax()
        best_box = boxes.index_select(0, best.reshape(1)).squeeze(0)  # boxes[best] would read `best` as a number
        return keep | (index == best), alive & (box_iou(best_box, boxes) <= iou_threshold), rounds + 1

    keep, _, _ = torch.while_loop(candidates_left, one_round, (keep, alive, torch.zeros((), dtype=torch.long, device=scores.device)))
    return keep
