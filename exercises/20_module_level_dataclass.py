"""Exercise: a box-regression loss that defines its record type inside the function.

`box_loss` compares predicted boxes with their targets. It keeps each set of boxes in a small dataclass with two
methods, and the dataclass is defined inside the function, so every call builds the class again. Dynamo cannot
trace a class statement (GB8977, "Invalid call to __build_class__"), and building the class breaks the graph
twice more: in the class body, a function of its own that Dynamo tries to compile and gives up on (GB0082), and
in the `exec` that `@dataclasses.dataclass` runs to write the class's methods (GB0059). Make `box_loss` compile
as one graph with `fullgraph=True`, with the same results as now, still using the dataclass.
Check your fix with:  gbcheck check module-level-dataclass
"""

import dataclasses

import torch
import torch.nn.functional as F


def box_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Boxes as rows (centre x, centre y, log width, log height): an L1 loss on corners plus one on log areas."""

    # TODO: Dynamo cannot trace this class statement, which runs on every call.
    @dataclasses.dataclass
    class Boxes:
        centre: torch.Tensor  # [n, 2]
        size: torch.Tensor  # [n, 2], widths and heights

        def area(self) -> torch.Tensor:
            return self.size.prod(dim=-1)

        def corners(self) -> torch.Tensor:
            return torch.cat([self.centre - self.size / 2, self.centre + self.size / 2], dim=-1)

    predicted = Boxes(pred[:, :2], pred[:, 2:].exp())
    expected = Boxes(target[:, :2], target[:, 2:].exp())
    corner_loss = F.l1_loss(predicted.corners(), expected.corners())
    return corner_loss + F.l1_loss(predicted.area().log(), expected.area().log())
