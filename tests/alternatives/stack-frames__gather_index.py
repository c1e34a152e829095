"""stack-frames, fixed with advanced indexing: an index grid `start[:, None] + offset[None, :]` of shape (windows, context) picks every window's frames in one gather, and flattening its last two axes lays them side by side, frame after frame, as the comprehension's `flatten(1)` did.

The grid is built with `torch.arange` from the input's length, so the number of windows is a symbolic size and
no Python loop over windows fixes it in the graph.
"""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    windows = features.shape[1] - context + 1
    start = torch.arange(windows, device=features.device)
    offset = torch.arange(context, device=features.device)
    frames = start[:, None] + offset[None, :]  # (windows, context): the frame indices of each window
    return features[:, frames].flatten(2)  # (batch, windows, context, dims) -> (batch, windows, context * dims)
