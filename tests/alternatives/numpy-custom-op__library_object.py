"""numpy-custom-op, fixed with a `torch.library.Library` object: the operator's schema is defined on the library, its CPU kernel (the unchanged `np.interp` code) registered with `lib.impl`, and its fake with `torch.library.register_fake`, so the graph calls the NumPy code as one opaque operation on every call and gets the same calibrated values.

This is the registration `torch.library.custom_op` performs for you, done by hand through a `Library`
handle, which also owns the registrations (they go away with it). Dynamo never looks inside the kernel, so
`np.interp` no longer breaks the graph (GB0294); the fake gives the output's shape and dtype, those of the input.
"""

import numpy as np
import torch

# Calibration curve fitted offline on held-out data: raw confidence -> observed accuracy.
RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.interp(confidence.numpy(), RAW, CALIBRATED)).to(confidence.dtype)


CALIBRATION_LIB = torch.library.Library("gbalt_lib", "DEF")  # kept alive at module level: it owns the op
CALIBRATION_LIB.define("calibrate(Tensor confidence) -> Tensor")
CALIBRATION_LIB.impl("calibrate", calibrate, "CPU")


@torch.library.register_fake("gbalt_lib::calibrate", lib=CALIBRATION_LIB)
def _(confidence: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(confidence)


def calibrated_predictions(logits: torch.Tensor, min_confidence: float = 0.5) -> torch.Tensor:
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = torch.ops.gbalt_lib.calibrate(confidence.detach())
    return torch.where(calibrated >= min_confidence, labels, -1)  # -1: abstain
