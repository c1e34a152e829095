"""online-normalize, a wrong fix. The frame counts come from a table of 256 built at import; a clip longer than 256
frames raises. The grader replays the graph one past the largest size of a constant tensor it holds
(contract replay-matches) (contract runs-where-the-clip-is)."""

import torch

_FRAME_COUNTS = torch.arange(1, 257, dtype=torch.float32)


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    frames = _FRAME_COUNTS[: features.shape[1]].to(features.dtype)
    return features - features.cumsum(dim=1) / frames.view(1, -1, 1)
