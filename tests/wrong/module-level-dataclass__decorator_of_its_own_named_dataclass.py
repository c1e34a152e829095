"""module-level-dataclass, a wrong fix. A `def dataclass(cls): return cls` of the file's own decorates `Boxes`, which
is then no dataclass at all (contract boxes-dataclass)."""

import torch
import torch.nn.functional as F


def dataclass(cls):
    return cls


@dataclass
class Boxes:
    centre: torch.Tensor  # [n, 2]
    size: torch.Tensor  # [n, 2], widths and heights

    def __init__(self, centre: torch.Tensor, size: torch.Tensor) -> None:
        self.centre, self.size = centre, size

    def area(self) -> torch.Tensor:
        return self.size.prod(dim=-1)

    def corners(self) -> torch.Tensor:
        return torch.cat([self.centre - self.size / 2, self.centre + self.size / 2], dim=-1)


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""
    predicted = Boxes(pred[:, :2], pred[:, 2:].exp())
    expected = Boxes(target[:, :2], target[:, 2:].exp())
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
