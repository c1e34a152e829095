"""streaming-accuracy, "fixed" by keeping only the last batch's accuracy: one graph and the same logits, but the task
asks for the accuracy over every batch so far (contract accuracy-over-every-batch), over batches of any size
(contract accuracy-over-every-sample); nor over 48 batches (contract accuracy-over-many-batches)
(contract counts-in-evaluation) (contract each-metric-its-own-counts) (contract counts-compiled-evaluation)
(contract each-result-kept)."""

import torch
from torch import nn


class StreamingAccuracy(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = torch.zeros(())

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        self.last = (logits.argmax(dim=-1) == target).float().mean()

    def compute(self) -> torch.Tensor:
        return self.last


class Classifier(nn.Module):
    def __init__(self, dim: int = 16, classes: int = 4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, classes))
        self.accuracy = StreamingAccuracy()

    def forward(self, features: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logits = self.net(features)
        self.accuracy.update(logits, target)
        return logits


torch.manual_seed(0)
classifier = Classifier()
