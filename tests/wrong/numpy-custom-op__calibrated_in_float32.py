"""numpy-custom-op, a wrong fix. The operator and its fake return float32 whatever the confidence's dtype: a
double-precision confidence just under the threshold rounds onto it (contract double-precision-logits)."""

import numpy as np
import torch

# Calibration curve fitted offline on held-out data: raw confidence -> observed accuracy.
RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


# A custom operator is opaque to Dynamo: the graph calls it, and its fake says what shape and dtype it returns.
@torch.library.custom_op("gbcourse::calibrate_confidence", mutates_args=())
def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.interp(confidence.numpy(), RAW, CALIBRATED)).float()


@calibrate.register_fake
def _(confidence: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(confidence, dtype=torch.float32)


def calibrated_predictions(logits: torch.Tensor, min_confidence: float = 0.5) -> torch.Tensor:
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = calibrate(confidence.detach())
    return torch.where(calibrated >= min_confidence, labels, -1)  # -1: abstain
