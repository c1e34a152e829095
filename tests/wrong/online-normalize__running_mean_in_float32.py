"""online-normalize, a wrong fix. The running mean is computed in float32 and cast back: a double-precision clip far
from zero loses its digits (contract same-for-other-dtypes)."""

import torch


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    # The running sums of all frames at once: one cumsum over the frame axis, whatever its length.
    clip = features.to(torch.float32)
    frames = torch.arange(1, clip.shape[1] + 1, device=clip.device, dtype=clip.dtype)
    return (clip - clip.cumsum(dim=1) / frames.view(1, -1, 1)).to(features.dtype)
