"""ignore-logger, a wrong fix. The training loss is returned detached: right on the draws, not what the task asks
(contract eager-matches)
(contract compiled-matches) (contract loss-still-trains)."""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
torch._dynamo.config.ignore_logging_functions.add(logger.info)

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss.detach()
