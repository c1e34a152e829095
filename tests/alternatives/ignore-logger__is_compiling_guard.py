"""ignore-logger, fixed with a torch.compiler.is_compiling() guard: Dynamo reads the guard as True and leaves the `logger.info` call out of the trace, exactly what ignore_logging_functions would do, while eager runs still log the same record, with no config change.

`regression_loss` scores a small regression head and reports each batch's size and loss with `logger.info`.
The log line is for eager debugging runs; compiled code may skip it. The call stays in the code, behind the guard.
"""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    if not torch.compiler.is_compiling():  # eager debugging runs only
        logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
