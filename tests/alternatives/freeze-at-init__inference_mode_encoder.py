"""freeze-at-init, fixed with a frozen-at-init encoder run under torch.inference_mode(): the parameters are frozen once in __init__, and the encoder's features, computed with autograd off and then cloned into a normal tensor, feed the trained head exactly as before, so the loss and the head's gradients are unchanged.

`torch.inference_mode()` is the strictest way to keep a frozen part out of autograd. Its outputs are inference
tensors, which autograd may not save for backward, so the features are cloned outside the block before the head
uses them (the head's backward needs its input). Forward no longer changes `requires_grad` (GB0125).
"""

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
        self.feature_encoder.requires_grad_(not freeze_feature_encoder)  # decided once, at construction

    def encode(self, waveform: torch.Tensor) -> torch.Tensor:
        return self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.freeze_feature_encoder:
            with torch.inference_mode():
                features = self.encode(waveform)
            features = features.clone()  # a normal tensor again, which the head's backward may save
        else:
            features = self.encode(waveform)
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.parameters() if p.requires_grad)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
