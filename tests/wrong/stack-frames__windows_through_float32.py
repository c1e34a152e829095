"""stack-frames, a wrong fix. The windows are cut from a float32 copy and cast back: double-precision frames lose their
digits (contract windows-of-any-context)."""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    # unfold makes every window in one operation: (batch, windows, dims, context), then frames side by side.
    return features.to(torch.float32).unfold(1, context, 1).transpose(2, 3).flatten(2).to(features.dtype)
