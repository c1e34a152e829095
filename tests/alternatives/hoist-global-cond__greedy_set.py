"""hoist-global-cond, fixed with a module-level set of greedy tasks: membership of the task name, a Python string, in a set computed once from the never-changing temperatures is a plain Python test Dynamo decides while tracing, and it holds exactly for the tasks whose temperature is 0.

`next_token_probs` turns a language model's logits into next-token probabilities with each task's decoding
temperature; a temperature of 0 means greedy decoding.
"""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY_TASKS = frozenset(task for task, t in TEMPERATURE.items() if (t == 0).item())


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    if task in GREEDY_TASKS:
        # Greedy: all the probability on the most likely token.
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return (logits / TEMPERATURE[task]).softmax(dim=-1)
