"""online-normalize, a wrong fix. The running mean for up to 64 frames, and the original loop, compiled again for each
length, past that: right on the draws, not what the task asks. The two long clips (100 and 140 frames) make a third
graph in any order of the calls (contract no-recompilation) (contract replay-matches); and the loop is still in the
traced code (contract frame-loop-out-of-trace)."""

import torch


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    T = features.shape[1]
    if T <= 64:
        frames = torch.arange(1, T + 1, device=features.device, dtype=features.dtype)
        return features - features.cumsum(dim=1) / frames.view(1, -1, 1)
    running = torch.zeros_like(features[:, 0])
    out = []
    for t in range(T):
        running = running + features[:, t]
        out.append(features[:, t] - running / (t + 1))
    return torch.stack(out, dim=1)
