"""streaming-accuracy, a wrong fix. The compiled code updates the metric only while autograd records: the calls of
the fullgraph trial that run as an evaluation loop are not counted (contract accuracy-over-every-batch), nor is a
batch of a compiled evaluation loop (contract counts-compiled-evaluation).
The test that picks the path reads the process, not the call (contract no-environment-switch)."""

import torch
from torch import nn


class StreamingAccuracy(nn.Module):
    def __init__(self):
        super().__init__()
        # Two counts instead of two lists: buffers of a fixed shape, updated in place inside the graph.
        self.register_buffer("correct", torch.zeros((), dtype=torch.long))
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        self.correct += (logits.argmax(dim=-1) == target).sum()
        self.seen += target.numel()

    def compute(self) -> torch.Tensor:
        """The fraction of correct predictions over every batch seen so far (called outside the compiled code)."""
        return self.correct / self.seen


class Classifier(nn.Module):
    def __init__(self, dim: int = 16, classes: int = 4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, classes))
        self.accuracy = StreamingAccuracy()

    def forward(self, features: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logits = self.net(features)
        # Compiled evaluation runs (no autograd) skip the metric's in-place updates.
        if torch.is_grad_enabled() or not torch.compiler.is_compiling():
            self.accuracy.update(logits, target)
        return logits


torch.manual_seed(0)
classifier = Classifier()
