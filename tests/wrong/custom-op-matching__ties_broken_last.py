"""custom-op-matching, a wrong fix. The operator hands `greedy_match` the costs with the predictions reversed and maps
the indices back: the same matching where no costs tie, the last of two equal predictions where they do (contract matches-boxes-of-any-scale)."""

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


@torch.library.custom_op("gbcourse::greedy_match_rows", mutates_args=())
def greedy_match_rows(cost: torch.Tensor) -> torch.Tensor:
    return cost.shape[0] - 1 - greedy_match(cost.flip(0))


@greedy_match_rows.register_fake
def _(cost: torch.Tensor) -> torch.Tensor:
    return cost.new_empty(cost.shape[1], dtype=torch.long)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match_rows(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
