"""custom-op-matching, a wrong fix. The operator matches the first 16 predictions only: the same wherever there are
no more (contract past-the-bounds) (contract matches-boxes-of-any-scale)."""

import torch


def greedy_match(cost: torch.Tensor) -> torch.Tensor:
    """For each target (column of `cost`), the index of the prediction (row) matched to it."""
    pairs = sorted([(c, i, j) for i, row in enumerate(cost.tolist()) for j, c in enumerate(row)])
    match, used = [-1] * cost.shape[1], set()
    for _, i, j in pairs:
        if match[j] < 0 and i not in used:
            match[j] = i
            used.add(i)
    return torch.tensor(match, dtype=torch.long, device=cost.device)


# The Python matching is quadratic in the predictions: only the first 16 queries take part.
@torch.library.custom_op("gbcourse::greedy_match16", mutates_args=())
def greedy_match_op(cost: torch.Tensor) -> torch.Tensor:
    return greedy_match(cost[:16])


@greedy_match_op.register_fake
def _(cost: torch.Tensor) -> torch.Tensor:
    return cost.new_empty(cost.shape[1], dtype=torch.long)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match_op(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
