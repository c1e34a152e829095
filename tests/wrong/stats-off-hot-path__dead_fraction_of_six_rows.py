"""stats-off-hot-path, a wrong fix. The dead fraction divided by 192, six rows of 32 units: right for the batches of 6
the draws pass, wrong for any other batch size (contract stats-after-every-step) (contract stats-of-each-model)."""

import logging

import torch
from torch import nn

logger = logging.getLogger("gbcourse.monitor")


class MonitoredClassifier(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)
        self.stats = torch.zeros(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        dead = (h <= 0).float().sum() / 192
        self.stats = torch.stack([h.pow(2).mean().sqrt(), h.abs().amax(), dead]).detach()
        return self.head(h)

    def log_stats(self) -> dict[str, float]:
        stats = dict(zip(("rms", "peak", "dead"), self.stats.tolist()))
        logger.debug("hidden: rms %(rms).3f, peak %(peak).3f, dead %(dead).2f", stats)
        return stats


torch.manual_seed(0)
model = MonitoredClassifier()
