"""stack-frames, fixed with one slice per frame offset: concatenating, along the feature axis, the `context` shifted views `features[:, i : i + windows]` puts frames t, t+1, ..., t+context-1 side by side in row t, exactly as flattening each window did.

The Python loop now runs over `context`, a constant of the call, not over the number of windows, so the length
of the clip stays a symbolic size and one dynamic graph serves every length after the first.
"""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    windows = features.shape[1] - context + 1
    # Offset i of every window at once: a slice of `windows` frames starting at frame i.
    return torch.cat([features[:, i:i + windows] for i in range(context)], dim=-1)
