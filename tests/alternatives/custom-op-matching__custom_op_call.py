"""custom-op-matching, fixed with torch.library.custom_op called as a function: `custom_op(name, fn, mutates_args=())` wraps the unchanged `greedy_match` exactly as the decorator form would, and `register_fake` by the operator's name gives Dynamo the result's shape and dtype, so the matching is opaque and runs on real values.

`box_matching_loss` pairs every target box with a predicted box (cheapest L1 cost first, each prediction used at
most once) and averages the L1 error of the pairs. The matching code stays a plain function, as shipped.
"""

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


# The operator wraps the Python function; the function itself is left as it is.
greedy_match_op = torch.library.custom_op("gbcourse_alt::greedy_match", greedy_match, mutates_args=())


def _greedy_match_fake(cost: torch.Tensor) -> torch.Tensor:
    return cost.new_empty((cost.shape[-1],), dtype=torch.long)


torch.library.register_fake("gbcourse_alt::greedy_match", _greedy_match_fake)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match_op(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
