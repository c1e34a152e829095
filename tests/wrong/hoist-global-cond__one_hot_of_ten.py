"""hoist-global-cond, a wrong fix. The greedy branch's one-hot has 10 columns, the examples' vocabulary, not the
logits' own width (contract eager-matches)
(contract compiled-matches) (contract replay-matches)."""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    # The temperatures never change, so the test was done once, above, into plain Python bools.
    if GREEDY[task]:
        # Greedy: all the probability on the most likely token.
        return F.one_hot(logits.argmax(dim=-1), 10).to(logits.dtype)
    return (logits / temperature).softmax(dim=-1)
