"""freeze-at-init, fixed with a loop of `param.requires_grad = False` in __init__: the encoder's parameters are frozen once, when the model is built, to exactly the state the original's first forward left them in, and forward only reads `requires_grad`, so the loss and all gradients are unchanged.

The original froze the encoder on every call with `requires_grad_(False)`, which Dynamo cannot trace (GB0125).
Freezing is a property of the model, not of a call: setting the attribute on each parameter at construction
(the way the chapter's first encoder does it, only outside forward) leaves forward with nothing to change.
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
        if freeze_feature_encoder:
            for param in self.feature_encoder.parameters():  # frozen once, here, never in forward
                param.requires_grad = False

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.parameters() if p.requires_grad)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
