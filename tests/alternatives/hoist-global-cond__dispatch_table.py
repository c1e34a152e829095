"""hoist-global-cond, fixed with a module-level dispatch table: the greedy-or-softmax decision is made once per task at import, into a dict of Python functions, so the compiled function only calls the one chosen for its task, with the same code as each branch had.

`next_token_probs` turns a language model's logits into next-token probabilities with each task's decoding
temperature; a temperature of 0 means greedy decoding. Instead of a per-task bool, the hoisted value is the
decoding function itself.
"""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}


def _greedy(logits: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
    # All the probability on the most likely token.
    return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)


def _sampled(logits: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
    return (logits / temperature).softmax(dim=-1)


# The temperatures never change, so which decoder each task uses is decided here, once.
DECODER = {task: _greedy if bool(t == 0) else _sampled for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    return DECODER[task](logits, TEMPERATURE[task])
