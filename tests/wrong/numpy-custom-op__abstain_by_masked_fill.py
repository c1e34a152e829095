"""numpy-custom-op, a wrong fix. The abstentions are filled in where the calibrated confidence is below the minimum,
so a row of NaN logits, whose confidence is NaN, keeps a label (contract operator-returns-what-calibrate-does)."""
import numpy as np
import torch

# Calibration curve fitted offline on held-out data: raw confidence -> observed accuracy.
RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


# A custom operator is opaque to Dynamo: the graph calls it, and its fake says what shape and dtype it returns.
@torch.library.custom_op("gbcourse::calibrate_confidence", mutates_args=())
def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.interp(confidence.numpy(), RAW, CALIBRATED)).to(confidence.dtype)


@calibrate.register_fake
def _(confidence: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(confidence)


def calibrated_predictions(logits: torch.Tensor, min_confidence: float = 0.5) -> torch.Tensor:
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = calibrate(confidence.detach())
    return labels.masked_fill(calibrated < min_confidence, -1)  # -1: abstain
