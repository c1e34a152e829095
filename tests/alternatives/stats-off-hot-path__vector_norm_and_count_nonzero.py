"""stats-off-hot-path, fixed with the statistics kept under no_grad as one tensor (an RMS from `linalg.vector_norm`,
the dead fraction from `count_nonzero`), read out by `log_stats`.
"""

import logging

import math

import torch
from torch import nn

logger = logging.getLogger("gbcourse.monitor")


class MonitoredClassifier(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)
        self._stats = torch.zeros(3)  # rms, peak, dead of the last forward pass, as one tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        with torch.no_grad():
            rms = torch.linalg.vector_norm(h) / math.sqrt(h.numel())
            dead = torch.count_nonzero(h <= 0) / h.numel()
            self._stats = torch.stack([rms, h.abs().max(), dead])
        return self.head(h)

    def log_stats(self) -> dict[str, float]:
        """Called by the training loop after the step: the last forward pass's statistics."""
        rms, peak, dead = (float(v) for v in self._stats)
        stats = {"rms": rms, "peak": peak, "dead": dead}
        logger.debug("hidden: rms %(rms).3f, peak %(peak).3f, dead %(dead).2f", stats)
        return stats


torch.manual_seed(0)
model = MonitoredClassifier()
