"""stats-off-hot-path, fixed with a non-persistent buffer updated in place under torch.no_grad(): forward writes the three statistics into `self.stats` with `copy_` (a tensor operation the graph keeps), and `log_stats()` turns them into the same three numbers after the step, outside the compiled code.

The buffer is registered with `persistent=False`, so the state dict is unchanged, and it follows the module to
any device; `no_grad` keeps the copy out of autograd, as `.detach()` would, so outputs and gradients are the
classifier's own.
"""

import logging

import torch
from torch import nn

logger = logging.getLogger("gbcourse.monitor")


class MonitoredClassifier(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)
        # rms, peak, dead of the last forward pass, kept on the module's device; read by log_stats()
        self.register_buffer("stats", torch.zeros(3), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        with torch.no_grad():  # monitoring only: no autograd history, no Python numbers, no logging here
            self.stats.copy_(torch.stack([h.pow(2).mean().sqrt(), h.abs().amax(), (h <= 0).float().mean()]))
        return self.head(h)

    def log_stats(self) -> dict[str, float]:
        """Called by the training loop after the step: the last forward pass's statistics."""
        rms, peak, dead = self.stats.tolist()
        stats = {"rms": rms, "peak": peak, "dead": dead}
        logger.debug("hidden: rms %(rms).3f, peak %(peak).3f, dead %(dead).2f", stats)
        return stats


torch.manual_seed(0)
model = MonitoredClassifier()
