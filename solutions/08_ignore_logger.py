"""Exercise: a loss that logs every batch through `logging`.

`regression_loss` scores a small regression head and reports each batch's size and loss with `logger.info`.
Under torch.compile a `logging.Logger` call is a graph break (GB0291, "logging.Logger method not supported for
non-export cases"). The log line is for eager debugging runs; compiled code may skip it. Make `regression_loss`
compile as one graph with `fullgraph=True`, with the same results as now, leaving the logging call in the code.
Check your fix with:  gbcheck check ignore-logger
"""

import logging

import torch
import torch.nn.functional as F

logger = logging.getLogger("gbcourse.train")
torch._dynamo.config.ignore_logging_functions.add(logger.info)  # .add keeps what other code put in the set

torch.manual_seed(0)
HEAD = torch.nn.Linear(8, 1)


def regression_loss(features: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    pred = HEAD(features).squeeze(-1)
    loss = F.smooth_l1_loss(pred, targets)
    # `logger.info` is in ignore_logging_functions: a no-op in compiled code, a normal call eagerly.
    logger.info("batch of %d, loss %.4f", features.shape[0], loss)
    return loss
