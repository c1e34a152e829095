"""online-normalize, a wrong fix. The frame counts are made on the CPU whatever device the clip is on
(contract runs-where-the-clip-is)."""

import torch


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    # The running sums of all frames at once: one cumsum over the frame axis, whatever its length.
    frames = torch.arange(1, features.shape[1] + 1, dtype=features.dtype)
    return features - features.cumsum(dim=1) / frames.view(1, -1, 1)
