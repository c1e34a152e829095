"""Exercise: stack each audio frame with the frames that follow it.

`stack_frames` turns features (batch, frames, dims) into (batch, frames - context + 1, context * dims):
each output row holds `context` consecutive frames side by side, the input layout of many speech
encoders. It has no graph break, but the list comprehension runs once per window while Dynamo traces it,
so every new number of frames compiles the function again. Make it compile at most twice over inputs of
any length, with the same results as now.
Check your fix with:  gbcheck check stack-frames
"""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    # TODO: one slice per window makes the number of windows a constant of the graph.
    windows = [features[:, t:t + context].flatten(1) for t in range(features.shape[1] - context + 1)]
    return torch.stack(windows, dim=1)
