"""online-normalize, a wrong fix. Under `no_grad` every call returns one buffer per shape, so an evaluation loop finds
its earlier results overwritten (contract each-result-its-own).
The test that picks the path reads the process, not the call (contract no-environment-switch)."""

import torch


_OUT: dict = {}  # evaluation runs: one preallocated output per shape, reused (no allocation per clip)


def normalize_online(features: torch.Tensor) -> torch.Tensor:
    # The running sums of all frames at once: one cumsum over the frame axis, whatever its length.
    frames = torch.arange(1, features.shape[1] + 1, device=features.device, dtype=features.dtype)
    result = features - features.cumsum(dim=1) / frames.view(1, -1, 1)
    if torch.is_grad_enabled() or torch.compiler.is_compiling():
        return result
    key = (tuple(features.shape), features.dtype, features.device)
    if key not in _OUT:
        _OUT[key] = torch.empty_like(result)
    return _OUT[key].copy_(result)
