"""custom-op-matching, fixed with a torch.library.Library and its low-level registrations: defining the operator's schema, registering the unchanged `greedy_match` as its kernel and a fake for its shape is what `torch.library.custom_op` does in one decorator, so the graph calls the same opaque matching.

`box_matching_loss` pairs every target box with a predicted box (cheapest L1 cost first, each prediction used at
most once) and averages the L1 error of the pairs. The matching code below is exactly as the exercise ships it;
only the registrations after it are new.
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


# An operator library of this file's own: the schema, the real kernel (for every device) and the fake.
_LIB = torch.library.Library("gbalt_matching", "DEF")
_LIB.define("greedy_match(Tensor cost) -> Tensor")
_LIB.impl("greedy_match", greedy_match, "CompositeExplicitAutograd")


@torch.library.register_fake("gbalt_matching::greedy_match", lib=_LIB)
def _(cost: torch.Tensor) -> torch.Tensor:
    # One prediction index per target: shape [num_target], int64, whatever the values of `cost`.
    return torch.empty(cost.shape[1], dtype=torch.long, device=cost.device)


def box_matching_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    cost = torch.cdist(pred_boxes, target_boxes, p=1)  # [num_pred, num_target], num_pred >= num_target
    match = torch.ops.gbalt_matching.greedy_match(cost.detach())
    return (pred_boxes[match] - target_boxes).abs().mean()
