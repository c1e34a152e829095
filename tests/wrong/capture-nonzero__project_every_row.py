"""capture-nonzero, "fixed" by projecting every position and picking the [MASK] rows afterwards: one graph and the
same logits, with `nonzero` in it, but the task asks to project only the positions it finds
(contract projects-selected-rows)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    return VOCAB_HEAD(hidden)[rows, cols]
