"""freeze-at-init, "fixed" by freezing the encoder in `__init__` without the test of `freeze_feature_encoder`: the
forward pass compiles as one graph with the same loss and the encoder is frozen, but now it is frozen whatever the
flag says, so a classifier built with `freeze_feature_encoder=False` no longer trains its encoder
(contract encoder-trains-when-asked); built to train the encoder, its penalty leaves the encoder out
(contract same-loss-when-it-trains)
(contract same-gradients)."""

import torch
import torch.nn.functional as F


class SpeechClassifier(torch.nn.Module):
    def __init__(self, n_classes: int = 4, freeze_feature_encoder: bool = True):
        super().__init__()
        torch.manual_seed(0)
        self.feature_encoder = torch.nn.Sequential(  # pretrained: turns a waveform into 8 features per frame
            torch.nn.Conv1d(1, 8, kernel_size=5, stride=2), torch.nn.GELU(),
            torch.nn.Conv1d(8, 8, kernel_size=3, stride=2), torch.nn.GELU(),
        )
        self.head = torch.nn.Linear(8, n_classes)
        self.freeze_feature_encoder = freeze_feature_encoder
        # Frozen once, when the model is built: forward no longer changes requires_grad.
        self.feature_encoder.requires_grad_(False)

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.parameters() if p.requires_grad)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
