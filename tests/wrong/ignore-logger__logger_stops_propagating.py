"""ignore-logger, a wrong fix. The logger no longer propagates, so the line it still logs reaches none of the
program's handlers (contract logs-when-eager).
What it runs when imported reads the process (contract no-environment-switch)."""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
logger.propagate = False  # keep the training loop's console quiet
torch._dynamo.config.ignore_logging_functions.add(logger.info)  # .add keeps what other code put in the set

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    # `logger.info` is in ignore_logging_functions: a no-op in compiled code, a normal call eagerly.
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
