"""custom-op-matching, a wrong fix. A fake that is right for at most 4 targets: right on the draws, not what the task
asks (contract past-the-bounds) (contract fake-says-what-the-operator-returns)."""

import torch


# A custom operator is opaque to Dynamo: the graph just calls it, and its fake gives the output's shape.
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
    return cost.new_empty(min(cost.shape[1], 4), dtype=torch.long)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
