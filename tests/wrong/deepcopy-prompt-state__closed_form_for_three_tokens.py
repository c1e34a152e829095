"""deepcopy-prompt-state, "fixed" with a closed form that holds for exactly three tokens: it passes the draws, not the
task (contract starts-from-the-cached-state)."""

import torch


class PromptedDecoder(torch.nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.register_buffer("prompt_sum", torch.randn(dim) * 4)
        self.register_buffer("prompt_count", torch.tensor(4.0))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        sums = self.prompt_sum + tokens.cumsum(dim=0)
        counts = self.prompt_count + torch.arange(1.0, 4.0, device=tokens.device)
        return self.proj(tokens - sums / counts[:, None])


decoder = PromptedDecoder()
