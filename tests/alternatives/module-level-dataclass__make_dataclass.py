"""module-level-dataclass, fixed with `dataclasses.make_dataclass` at module level: the same `Boxes` dataclass (same fields, same methods) is created once at import rather than on every call, so `box_loss` only creates instances and computes the same loss and gradients.

`make_dataclass` is the functional form of `@dataclass class Boxes: ...`: it builds the class from its name,
its fields and a namespace of methods. Called at module level, it runs once, before `box_loss` is ever
compiled, instead of inside the compiled function (GB8977, GB0082, GB0059).
"""

import dataclasses

import torch
import torch.nn.functional as F


def _area(self) -> torch.Tensor:
    return self.size.prod(dim=-1)


def _corners(self) -> torch.Tensor:
    return torch.cat([self.centre - self.size / 2, self.centre + self.size / 2], dim=-1)


Boxes = dataclasses.make_dataclass(
    "Boxes",
    [("centre", torch.Tensor), ("size", torch.Tensor)],  # [n, 2] each: centres, and widths and heights
    namespace={"area": _area, "corners": _corners},
)
Boxes.__module__ = __name__  # as a class statement here would set it (make_dataclass has no module= before 3.12)


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""
    predicted = Boxes(pred[:, :2], pred[:, 2:].exp())
    expected = Boxes(target[:, :2], target[:, 2:].exp())
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
