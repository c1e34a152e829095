"""capture-nonzero, "fixed" by writing the head as a `matmul` on every row, beside an identity `linear` on the rows
`nonzero` selects: the head still works on every row (contract projects-selected-rows), and a hook on the head
does not run (contract every-mask-projected)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens
_SAME = torch.eye(32)  # "re-projection" of the selected logits: the identity


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    every_position = hidden @ VOCAB_HEAD.weight.t() + VOCAB_HEAD.bias  # [batch, seq, vocabulary]: every row
    return torch.nn.functional.linear(every_position[rows, cols], _SAME)  # [number of masked tokens, vocabulary]
