"""ignore-logger, fixed by ignoring logging.Logger.info for every logger: Dynamo drops any `Logger.info` call, this logger's included, from the traced code (the chapter's "every logger" variant), and an eager call still logs through `logger.info` exactly as before.

`regression_loss` scores a small regression head and reports each batch's size and loss with `logger.info`.
The log line is for eager debugging runs, so compiled code may skip it, on this logger or any other.

Needs torch._dynamo.config.ignore_logging_functions.
"""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
torch._dynamo.config.ignore_logging_functions.add(logging.Logger.info)  # info on every logger

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    # A no-op in compiled code, a normal log record eagerly.
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
