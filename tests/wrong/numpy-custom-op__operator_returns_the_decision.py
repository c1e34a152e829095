"""numpy-custom-op, "fixed" with a custom operator that still applies the curve with `np.interp` but returns the
decision at the default threshold, 1.0 where the calibrated confidence is at least 0.5 and 0.0 elsewhere, instead of
the calibrated values: the function compiles as one graph and gives the same labels at the default `min_confidence`,
but the task asks for an operator that returns what `calibrate` does, and at any other threshold the labels differ
(contract operator-returns-what-calibrate-does) (contract double-precision-logits)."""

import numpy as np
import torch

# Calibration curve fitted offline on held-out data: raw confidence -> observed accuracy.
RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


# A custom operator is opaque to Dynamo: the graph calls it, and its fake says what shape and dtype it returns.
@torch.library.custom_op("gbcourse::calibrate_confidence", mutates_args=())
def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    calibrated = np.interp(confidence.numpy(), RAW, CALIBRATED)
    return torch.from_numpy((calibrated >= 0.5).astype(np.float64)).to(confidence.dtype)


@calibrate.register_fake
def _(confidence: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(confidence)


def calibrated_predictions(logits: torch.Tensor, min_confidence: float = 0.5) -> torch.Tensor:
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = calibrate(confidence.detach())
    return torch.where(calibrated >= min_confidence, labels, -1)  # -1: abstain
