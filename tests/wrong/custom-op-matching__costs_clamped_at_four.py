"""custom-op-matching, a wrong fix. The shipped `greedy_match` run on costs clamped at 4.0: right for boxes in the unit
square, wrong for boxes in pixels (contract matches-boxes-of-any-scale)."""
import torch


@torch.library.custom_op("gbcourse::greedy_match", mutates_args=())
def greedy_match(cost: torch.Tensor) -> torch.Tensor:
    """For each target (column of `cost`), the index of the prediction (row) matched to it."""
    pairs = sorted([(c, i, j) for i, row in enumerate(cost.tolist()) for j, c in enumerate(row)])
    match, used = [-1] * cost.shape[1], set()
    for _, i, j in pairs:
        if match[j] < 0 and i not in used:
            match[j] = i
            used.add(i)
    return torch.tensor(match, dtype=torch.long, device=cost.device)


@greedy_match.register_fake
def _(cost: torch.Tensor) -> torch.Tensor:
    return cost.new_empty(cost.shape[1], dtype=torch.long)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)
    match = greedy_match(cost.detach().clamp(max=4.0))
    return (pred_boxes[match] - target_boxes).abs().mean()
