"""deepcopy-prompt-state, fixed with a vectorised cumsum: the running sums and counts of every step come from `cumsum`/`arange` added to the cached state out of place, so nothing is ever written into the prompt's state and each call starts from it as cached.

The loop updated a copy of the state in place, one token at a time. Step t needs the prompt's sum plus the
first t+1 tokens, and the prompt's count plus t+1: `tokens.cumsum(0)` and `arange(1, n + 1)` give all of them
at once, and the projection runs on the whole [n, dim] batch of centred tokens.
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
        # Running sums and counts after each token, computed out of place from the cached prompt state.
        sums = self.prompt_state["sum"] + tokens.cumsum(dim=0)  # [n, dim]
        steps = torch.arange(1, tokens.shape[0] + 1, dtype=tokens.dtype, device=tokens.device)
        counts = self.prompt_state["count"] + steps  # [n]
        return self.proj(tokens - sums / counts[:, None])


decoder = PromptedDecoder()
