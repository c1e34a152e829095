"""Exercise: a box-matching loss whose matching step runs in plain Python.

`box_matching_loss` pairs every target box with a predicted box (cheapest L1 cost first, each prediction used at
most once) and averages the L1 error of the pairs. The matching reads the cost matrix with `.tolist()` and loops
over it in Python, which Dynamo cannot trace into a graph (GB0109, "Tensor.tolist() with non-integer tensor").
Make the loss compile as one graph with `fullgraph=True`, keeping the matching code itself as it is.
Check your fix with:  gbcheck check custom-op-matching
"""

import torch


# TODO: Dynamo cannot trace this Python loop over the values of `cost`.
def greedy_match(cost: torch.Tensor) -> torch.Tensor:
    """For each target (column of `cost`), the index of the prediction (row) matched to it."""
    pairs = sorted([(c, i, j) for i, row in enumerate(cost.tolist()) for j, c in enumerate(row)])
    match, used = [-1] * cost.shape[1], set()
    for _, i, j in pairs:
        if match[j] < 0 and i not in used:
            match[j] = i
            used.add(i)
    return torch.tensor(match, dtype=torch.long, device=cost.device)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = greedy_match(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
