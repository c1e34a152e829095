"""deepcopy-prompt-state, fixed with `torch.empty_like(value).copy_(value)`: a fresh buffer filled with `copy_` is a private copy of each cached tensor, built from graph operations, so the in-place updates change only the copy.

The decoding loop is unchanged: it still updates its own state in place. Only the copy is different: instead
of `copy.deepcopy`, which Dynamo cannot trace for tensors, each cached tensor is copied into a new tensor of
the same shape, dtype and device.
"""

import torch


class PromptedDecoder(torch.nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)
        # What the decoder keeps of its prompt: the sum of the prompt's 4 token features, and their count.
        self.prompt_state = {"sum": torch.randn(dim) * 4, "count": torch.tensor(4.0)}

    def private_state(self) -> dict[str, torch.Tensor]:
        """A copy of the prompt's state that the caller may update in place."""
        state = {}
        for name, value in self.prompt_state.items():
            state[name] = torch.empty_like(value).copy_(value)
        return state

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        state = self.private_state()
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        return torch.stack(outputs)


decoder = PromptedDecoder()
