"""ignore-logger, fixed with the config's older name: `ignore_logger_methods`, which torch 2.11 and later keep as an
alias of `ignore_logging_functions` (the same set), holds `logger.info`, so compiled code skips the call and eager
runs still log.
"""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
torch._dynamo.config.ignore_logger_methods.add(logger.info)  # compiled code skips this logger's info calls

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
