"""numpy-custom-op, a wrong fix. The confidence clamped at 0.25 before `np.interp`: right for 4 classes, wrong for 10
(contract operator-returns-what-calibrate-does)."""
import numpy as np
import torch

RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


@torch.library.custom_op("gbcourse::calibrate_confidence", mutates_args=())
def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.interp(confidence.clamp(min=0.25).numpy(), RAW, CALIBRATED)).to(confidence.dtype)


@calibrate.register_fake
def _(confidence: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(confidence)


def calibrated_predictions(logits: torch.Tensor, min_confidence: float = 0.5) -> torch.Tensor:
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = calibrate(confidence.detach())
    return torch.where(calibrated >= min_confidence, labels, -1)
