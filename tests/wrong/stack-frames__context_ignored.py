"""stack-frames, a wrong fix. The `context` argument is ignored: wrong on the draws, whose context each check draws
(contract eager-matches) (contract compiled-matches) (contract replay-matches),
and not what the task asks (contract windows-of-any-context)."""

import torch


def stack_frames(features: torch.Tensor, context: int = 3) -> torch.Tensor:
    return features.unfold(1, 3, 1).transpose(2, 3).flatten(2)
