"""module-level-dataclass, fixed with a module-level `@dataclass(frozen=True, slots=True)`: the class is built once at import instead of on every call, and a frozen, slotted record holds the same two tensors and computes the same corners and areas, so the loss and its gradients are unchanged.

Dynamo cannot trace a class statement in the compiled function (GB8977, plus GB0082 and GB0059 for building
the dataclass). Defined at module level, `Boxes` exists before `box_loss` is compiled, and `box_loss` only
creates instances, which Dynamo traces. The boxes are never changed after they are made, so the record can be
frozen (and slotted), which says so.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True, slots=True)
class Boxes:
    """Axis-aligned boxes by centre and size (widths and heights)."""

    centre: torch.Tensor  # [n, 2]
    size: torch.Tensor  # [n, 2]

    def area(self) -> torch.Tensor:
        width, height = self.size.unbind(dim=-1)
        return width * height

    def corners(self) -> torch.Tensor:
        half = self.size / 2
        return torch.cat([self.centre - half, self.centre + half], dim=-1)


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""
    predicted = Boxes(centre=pred[:, :2], size=pred[:, 2:].exp())
    expected = Boxes(centre=target[:, :2], size=target[:, 2:].exp())
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
