"""streaming-accuracy, fixed by keeping every batch's hits in one tensor that grows with `torch.cat`: the number of
hits seen is a tensor dimension, not a list's length, so automatic dynamic shapes make it a symbol on the second
compilation and that graph serves every later batch (two compilations: the empty start, then the dynamic one).

Rejected by today's grader although it is correct: the dynamic graph takes the hits' length as an input whose
source is a module attribute's size (`L['self']._modules['accuracy'].hits.size()[0]`), which the replay cannot
feed (checker/grading/replay.py records sizes of the call's arguments only). Kept out of the alternatives the
tests require to pass until the replay can; the `.rejected.py` name is what tests/test_contracts.py skips.
"""

import torch
from torch import nn


class StreamingAccuracy(nn.Module):
    def __init__(self):
        super().__init__()
        # One tensor of hits that grows by a batch per call: its length is a dimension, which can be dynamic.
        self.hits = torch.zeros(0, dtype=torch.bool)

    def update(self, logits: torch.Tensor, target: torch.Tensor) -> None:
        self.hits = torch.cat([self.hits, logits.argmax(dim=-1) == target])

    def compute(self) -> torch.Tensor:
        """The fraction of correct predictions over every batch seen so far (called outside the compiled code)."""
        return self.hits.float().mean()


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
