"""freeze-at-init, "fixed" with the weight penalty is a number computed once at construction: it passes the draws, not
the task (contract eager-matches) (contract compiled-matches) (contract same-loss-when-it-trains)
(contract same-gradients) (contract same-loss-after-loading)."""

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
        if freeze_feature_encoder:
            self.feature_encoder.requires_grad_(False)
        with torch.no_grad():
            self.penalty = float(sum((p**2).sum() for p in self.parameters() if p.requires_grad))

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        return loss + 1e-3 * self.penalty


classifier = SpeechClassifier()
