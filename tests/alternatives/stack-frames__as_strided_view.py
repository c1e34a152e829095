"""stack-frames, fixed with an as_strided view: in a contiguous (batch, frames, dims) tensor, window t is the `context * dims` consecutive numbers starting at frame t, so a view with strides (frames * dims, dims, 1) is every flattened window at once, the comprehension's rows exactly.

The sizes and strides are computed from the input's shape, so they stay symbolic and one dynamic graph serves
every length; the result is copied out of the overlapping view, so it is an ordinary tensor like torch.stack's.
"""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    features = features.contiguous()
    batch, frames, dims = features.shape
    windows = frames - context + 1
    view = features.as_strided((batch, windows, context * dims), (frames * dims, dims, 1))
    return view.clone()  # the windows overlap in memory: give back a tensor of its own
