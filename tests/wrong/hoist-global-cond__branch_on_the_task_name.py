"""hoist-global-cond, "fixed" by branching on the task's name: the two shipped tasks agree with the table, but the
decision no longer reads it, so the file built with the temperatures swapped decodes the other way
(contract branch-follows-the-table)."""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    if task == "extraction":
        # Greedy: all the probability on the most likely token.
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return (logits / temperature).softmax(dim=-1)
