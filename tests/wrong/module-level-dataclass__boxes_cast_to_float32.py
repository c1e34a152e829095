"""module-level-dataclass, a wrong fix. The boxes are cast to float32 before the dataclass is built: double-precision
boxes lose their precision (contract past-the-bounds) (contract double-precision-boxes)."""

import dataclasses

import torch
import torch.nn.functional as F


# Defined once, at module level: Dynamo only has to create instances of it, which it traces.
@dataclasses.dataclass
class Boxes:
    centre: torch.Tensor  # [n, 2]
    size: torch.Tensor  # [n, 2], widths and heights

    def area(self) -> torch.Tensor:
        return self.size.prod(dim=-1)

    def corners(self) -> torch.Tensor:
        return torch.cat([self.centre - self.size / 2, self.centre + self.size / 2], dim=-1)


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""
    pred, target = pred.float(), target.float()
    predicted = Boxes(pred[:, :2], pred[:, 2:].exp())
    expected = Boxes(target[:, :2], target[:, 2:].exp())
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
