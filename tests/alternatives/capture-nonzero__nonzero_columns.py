"""capture-nonzero, fixed with the module-level config and `torch.nonzero` as an [n, 2] index matrix: its two columns are the (row, column) pairs that `nonzero(as_tuple=True)` returns as two tensors, so indexing `hidden` with them selects the same [MASK] states, in the same order, before the one projection.

Setting `torch._dynamo.config.capture_dynamic_output_shape_ops = True` when the file is imported (the config
this exercise allows) keeps `nonzero` in the graph with an unbacked number of rows, in default mode too, and
one graph serves every count of [MASK] tokens, zero included.
"""

import torch
from torch._dynamo import config as dynamo_config

dynamo_config.capture_dynamic_output_shape_ops = True  # before anything is compiled

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    positions = torch.nonzero(input_ids == MASK_ID)  # [number of masked tokens, 2]: (sequence, token)
    sequence, token = positions.unbind(dim=1)
    return VOCAB_HEAD(hidden[sequence, token])  # [number of masked tokens, vocabulary]
