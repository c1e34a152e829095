"""module-level-dataclass, "fixed" by building `Boxes` and only asserting its type while the loss uses plain
tensors: the built boxes reach nothing the function returns (contract boxes-built)."""

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
    built = Boxes(pred[:, :2], pred[:, 2:].exp())
    assert isinstance(built, Boxes)
    pc, ps = pred[:, :2], pred[:, 2:].exp()
    tc, ts = target[:, :2], target[:, 2:].exp()
    corner_loss = F.l1_loss(torch.cat([pc - ps / 2, pc + ps / 2], -1), torch.cat([tc - ts / 2, tc + ts / 2], -1))
    return corner_loss + F.l1_loss(ps.prod(-1).log(), ts.prod(-1).log())
