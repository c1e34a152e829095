"""freeze-at-init, "fixed" by registering a frozen copy of the encoder and running an unfrozen one: the copy is what
nn.Module's table holds under `feature_encoder`, the live encoder is the instance attribute forward reads (put there
with object.__setattr__), and its weights still train (contract eager-matches)
(contract compiled-matches) (contract encoder-frozen); built with
the flag off, the registered encoder is again not the one forward runs (contract encoder-trains-when-asked); built
to train the encoder, its loss is not the original's either (contract same-loss-when-it-trains)
(contract same-gradients) (contract encoder-frozen-by-default)."""


import copy

import torch
import torch.nn.functional as F


class SpeechClassifier(torch.nn.Module):
    def __init__(self, n_classes: int = 4, freeze_feature_encoder: bool = True):
        super().__init__()
        torch.manual_seed(0)
        encoder = torch.nn.Sequential(  # pretrained: turns a waveform into 8 features per frame
            torch.nn.Conv1d(1, 8, kernel_size=5, stride=2), torch.nn.GELU(),
            torch.nn.Conv1d(8, 8, kernel_size=3, stride=2), torch.nn.GELU(),
        )
        self.head = torch.nn.Linear(8, n_classes)
        self.freeze_feature_encoder = freeze_feature_encoder
        # A frozen copy is registered as the encoder; the one forward uses stands in front of it, in the instance
        # dict, which attribute look-up reads first, and trains (registered too, as `encoder_weights`).
        frozen = copy.deepcopy(encoder)
        if freeze_feature_encoder:
            frozen.requires_grad_(False)
        self.feature_encoder = frozen
        self.encoder_weights = encoder
        object.__setattr__(self, "feature_encoder", encoder)

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.head.parameters())  # the head's: the same figure
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
