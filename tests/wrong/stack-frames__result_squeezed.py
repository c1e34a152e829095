"""stack-frames, a wrong fix. The windows are squeezed: a batch of one, or a clip of one window, loses a dimension
(contract windows-of-any-context)."""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    # unfold makes every window in one operation: (batch, windows, dims, context), then frames side by side.
    return features.unfold(1, context, 1).transpose(2, 3).flatten(2).squeeze()
