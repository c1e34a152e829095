"""Exercise: a speech classifier that freezes its feature encoder on every forward pass.

`SpeechClassifier` fine-tunes a small head on top of a pretrained convolutional feature encoder, which must stay
frozen. Its forward pass freezes the encoder on every call with `requires_grad_(False)`, then adds an L2 penalty
on the parameters being trained (those that require gradients) to the loss. Under torch.compile, changing
`requires_grad` is a graph break (GB0125, "Unsupported Tensor.requires_grad_() call"). Make the forward pass
compile as one graph with `fullgraph=True`, with the same results as now and the feature encoder still frozen
(and still trained when the classifier is built with `freeze_feature_encoder=False`).
Check your fix with:  gbcheck check freeze-at-init
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

    def forward(self, waveform: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        # TODO: changing requires_grad breaks the graph, and the encoder only needs freezing once.
        if self.freeze_feature_encoder:
            self.feature_encoder.requires_grad_(False)
        features = self.feature_encoder(waveform[:, None]).mean(dim=-1)  # [batch, 8]
        loss = F.cross_entropy(self.head(features), labels)
        penalty = sum((p**2).sum() for p in self.parameters() if p.requires_grad)  # trained parameters only
        return loss + 1e-3 * penalty


classifier = SpeechClassifier()
