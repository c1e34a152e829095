"""stack-frames, a wrong fix. Under `is_compiling()` the context is 3 whatever the caller passes: eager calls are right,
compiled ones are not (contract compiled-matches) (contract replay-matches)."""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    if torch.compiler.is_compiling():
        context = 3  # the model's context, fixed when the graph is built
    return features.unfold(1, context, 1).transpose(2, 3).flatten(2)
