"""hoist-global-cond, fixed with precomputed Python floats: the checkpoint's temperatures never change, so reading each one once into a Python float (exact, since a float32 value fits a Python float) lets Dynamo decide `== 0` while tracing and divide by the same number.

`next_token_probs` turns a language model's logits into next-token probabilities with each task's decoding
temperature; a temperature of 0 means greedy decoding. The tensors stay as loaded; the function reads their
values through a dict of Python numbers made once at import.
"""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
# The same temperatures as plain Python numbers, read once: Dynamo treats them as constants.
TEMPERATURE_VALUE = {task: t.item() for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE_VALUE[task]
    if temperature == 0:
        # Greedy: all the probability on the most likely token.
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return (logits / temperature).softmax(dim=-1)
