"""freeze-at-init, fixed with torch.no_grad() in forward: the encoder's parameters are frozen once in __init__ (so `requires_grad` and the penalty are as before), and forward runs the frozen encoder under `torch.no_grad()`, which Dynamo traces: the same loss, and the same gradients for the trained head (the waveform gets none, which no caller here needs).

The original froze the encoder on every call with `requires_grad_(False)`, a graph break (GB0125). Here the
encoder's parameters are frozen when the model is built, with a loop over them, and forward keeps the frozen
part out of autograd with `torch.no_grad()`, as the chapter recommends for a frozen part in forward: nothing
in forward changes `requires_grad` any more, it only reads it for the penalty.
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
        if freeze_feature_encoder:  # once, when the model is built
            for param in self.feature_encoder.parameters():
                param.requires_grad = False

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.freeze_feature_encoder:
            with torch.no_grad():  # the frozen encoder records nothing for autograd
                features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        else:
            features = self.feature_encoder(waveform[:, None]).mean(dim=-1)
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.parameters() if p.requires_grad)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
