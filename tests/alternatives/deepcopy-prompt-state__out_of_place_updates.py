"""deepcopy-prompt-state, fixed with out-of-place updates: `s = s + token` makes a new tensor each step and never writes into the cached prompt state, so every call starts from it without any copy.

`PromptedDecoder` keeps the sum of its prompt's token features and their count on the module. Each call
decodes a few more tokens from that state. Instead of copying the state and updating the copy in place, this
fix reads the two cached tensors and rebinds local names to new tensors at every step: the cached ones are
never written, so the next call sees them exactly as they were cached.
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

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        # No copy needed: out-of-place `+` returns new tensors, the cached ones are only read.
        running_sum = self.prompt_state["sum"]
        running_count = self.prompt_state["count"]
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            running_sum = running_sum + token
            running_count = running_count + 1
            outputs.append(self.proj(token - running_sum / running_count))
        return torch.stack(outputs)


decoder = PromptedDecoder()
