"""freeze-at-init, "fixed" by wrapping the encoder's weights in a Parameter subclass whose `requires_grad` property
says False while autograd's flag stays True: the encoder still trains (contract eager-matches)
(contract compiled-matches)
(contract encoder-frozen); built to train the encoder, its loss is not the original's either
(contract same-loss-when-it-trains)
(contract same-gradients) (contract encoder-frozen-by-default)."""

import torch
import torch.nn.functional as F


class _ReportsFrozen(torch.nn.Parameter):
    requires_grad = property(lambda self: False)  # what Python code reads; autograd reads the C flag


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
            for conv in (self.feature_encoder[0], self.feature_encoder[2]):
                conv.weight = _ReportsFrozen(conv.weight.data)
                conv.bias = _ReportsFrozen(conv.bias.data)

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.head.parameters())  # the trained head only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
