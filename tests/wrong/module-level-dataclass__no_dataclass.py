"""module-level-dataclass, "fixed" by dropping the dataclass and computing on plain tensors: the same loss, but
the task asks to keep the boxes in the `Boxes` dataclass (contract boxes-dataclass), built where the loss is computed
(contract boxes-built)."""

import torch
import torch.nn.functional as F


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    def corners(centre: torch.Tensor, size: torch.Tensor) -> torch.Tensor:
        return torch.cat([centre - size / 2, centre + size / 2], dim=-1)

    pred_size, target_size = pred[:, 2:].exp(), target[:, 2:].exp()
    corner_loss = F.l1_loss(corners(pred[:, :2], pred_size), corners(target[:, :2], target_size))
    return corner_loss + F.l1_loss(pred_size.prod(dim=-1).log(), target_size.prod(dim=-1).log())
