"""custom-op-matching, a wrong fix. The operator is given the costs rounded to float32, so double-precision boxes whose
costs differ below float32's resolution tie, and another prediction is matched
(contract matches-double-precision-costs)."""

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
    return cost.new_empty(cost.shape[1], dtype=torch.long)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match(cost.detach().float())  # costs to float32 for the matcher
    return (pred_boxes[match] - target_boxes).abs().mean()
