"""stats-off-hot-path, a wrong fix. The statistics are updated only for batches of three rows or more
(contract stats-after-every-step)."""

import logging

import torch
from torch import nn

logger = logging.getLogger("gbcourse.monitor")


class MonitoredClassifier(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)
        self.stats = torch.zeros(3)  # rms, peak, dead: a tensor, turned into numbers by log_stats()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        # Tensors stay in the graph; the numbers and the logging wait for log_stats(), outside the hot path.
        if x.shape[0] >= 3:  # too few rows for meaningful statistics
            self.stats = torch.stack([h.pow(2).mean().sqrt(), h.abs().amax(), (h <= 0).float().mean()]).detach()
        return self.head(h)

    def log_stats(self) -> dict[str, float]:
        """Called by the training loop after the step (not compiled): one sync for all three numbers."""
        stats = dict(zip(("rms", "peak", "dead"), self.stats.tolist()))
        logger.debug("hidden: rms %(rms).3f, peak %(peak).3f, dead %(dead).2f", stats)
        return stats


torch.manual_seed(0)
model = MonitoredClassifier()
