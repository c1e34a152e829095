"""freeze-at-init, "fixed" by not freezing the encoder and hiding it: the encoder's `parameters()` yields detached
copies, which need no gradient, while its own weights still do and would train; the penalty sums the head's
parameters, so the loss is the reference's (contract eager-matches)
(contract compiled-matches) (contract encoder-frozen); built to train the
encoder, its penalty misses the encoder's parameters too (contract same-loss-when-it-trains)
(contract same-gradients) (contract encoder-frozen-by-default)."""


import torch
import torch.nn.functional as F


class _Encoder(torch.nn.Sequential):
    """Reports copies of its weights that need no gradient: what asks `parameters()` sees a frozen encoder."""

    def parameters(self, recurse: bool = True):
        for p in super().parameters(recurse):
            yield p.detach()


class SpeechClassifier(torch.nn.Module):
    def __init__(self, n_classes: int = 4, freeze_feature_encoder: bool = True):
        super().__init__()
        torch.manual_seed(0)
        self.feature_encoder = _Encoder(  # pretrained: turns a waveform into 8 features per frame
            torch.nn.Conv1d(1, 8, kernel_size=5, stride=2), torch.nn.GELU(),
            torch.nn.Conv1d(8, 8, kernel_size=3, stride=2), torch.nn.GELU(),
        )
        self.head = torch.nn.Linear(8, n_classes)
        self.freeze_feature_encoder = freeze_feature_encoder

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.head.parameters())  # the head's: the same figure
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
