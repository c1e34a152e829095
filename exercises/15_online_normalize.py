"""Exercise: online mean normalisation of audio features, one frame at a time.

`normalize_online` subtracts from each frame of a feature sequence (batch, frames, features) the mean of
all frames so far, as a streaming speech model does so that it never looks ahead. It has no graph break,
and yet torch.compile compiles it again for every new number of frames: the `for` loop over the frames is
unrolled while Dynamo traces it, so the graph holds one step per frame and fits that length only. Clips
have every length, so the function never stops recompiling, and after `recompile_limit` lengths it runs
eagerly. Make it compile at most twice over clips of any length (the first length, then one graph with a
dynamic length), with the same results as now.
Check your fix with:  gbcheck check online-normalize
"""

import torch


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    total = torch.zeros_like(features[:, 0])
    means = []
    # TODO: a Python loop over a size turns that size into a constant of the graph.
    for t in range(features.shape[1]):
        total = total + features[:, t]
        means.append(total / (t + 1))
    return features - torch.stack(means, dim=1)
