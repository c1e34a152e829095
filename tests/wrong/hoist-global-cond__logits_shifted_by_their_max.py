"""hoist-global-cond, a wrong fix. The logits are shifted by the batch's one maximum before the temperature, so an
empty batch raises and a row beside a far larger one loses its precision (contract confident-logits)."""
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
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return ((logits - logits.max()) / temperature).softmax(dim=-1)
