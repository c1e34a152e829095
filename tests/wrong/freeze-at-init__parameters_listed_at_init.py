"""freeze-at-init, a wrong fix. The penalty sums a list of parameters built in `__init__`: a classifier whose every
parameter is frozen after it was built still pays their penalty (contract same-loss-when-it-trains), and a checkpoint
loaded with `assign=True` puts new parameters in place while the loss still reads the old ones
(contract same-loss-after-loading)."""

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
        if freeze_feature_encoder:
            self.feature_encoder.requires_grad_(False)
        # The parameters being trained, listed once, now that the encoder is frozen: forward no longer filters them.
        self.trained = [p for p in self.parameters() if p.requires_grad]

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.trained)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
