"""ignore-logger, a wrong fix. The regression head's weight and bias detached: the same loss, and no gradient for the
head it trains (contract eager-matches)
(contract compiled-matches)."""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
torch._dynamo.config.ignore_logging_functions.add(logger.info)

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = F.linear(features, HEAD.weight.detach(), HEAD.bias.detach()).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
