"""ignore-logger, a wrong fix. `logger.info` runs only when the loss requires grad: an evaluation loop, under
`no_grad`, logs nothing (contract logs-when-eager)."""

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
    if loss.requires_grad:  # a training step's batch
        logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
