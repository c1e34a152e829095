"""module-level-dataclass, fixed with a module-level dataclass that has a `from_rows` classmethod: the class is defined once at import, and the helper constructor builds each `Boxes` from its [n, 4] rows with the same slicing and `exp`, so the loss and gradients are those of the original.

The class statement inside `box_loss` was the break (GB8977, with GB0082 and GB0059 while the dataclass is
built). Moving `Boxes` to module level removes it; the row layout (centre x, centre y, log width, log height)
becomes the record's own alternative constructor, which Dynamo traces like any other method call.
"""

import dataclasses

import torch
import torch.nn.functional as F


@dataclasses.dataclass
class Boxes:
    centre: torch.Tensor  # [n, 2]
    size: torch.Tensor  # [n, 2], widths and heights

    @classmethod
    def from_rows(cls, rows: torch.Tensor) -> "Boxes":
        """Rows of (centre x, centre y, log width, log height)."""
        centre, log_size = rows.split(2, dim=-1)
        return cls(centre=centre, size=log_size.exp())

    def area(self) -> torch.Tensor:
        return self.size.prod(dim=-1)

    def corners(self) -> torch.Tensor:
        return torch.cat([self.centre - self.size / 2, self.centre + self.size / 2], dim=-1)


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""
    predicted, expected = Boxes.from_rows(pred), Boxes.from_rows(target)
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
