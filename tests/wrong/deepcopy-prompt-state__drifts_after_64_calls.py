"""deepcopy-prompt-state, a wrong fix. From the 65th call on, each call writes its final state back into the cache,
counted in a private tensor attribute `_calls`: every tensor the module keeps, a private one's too, must be as it
was after a call (contract cached-state-left-as-it-was)."""

import torch


class PromptedDecoder(torch.nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.register_buffer("prompt_sum", torch.randn(dim) * 4)
        self.register_buffer("prompt_count", torch.tensor(4.0))
        self._calls = torch.zeros(())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        state = {"sum": self.prompt_sum.clone(), "count": self.prompt_count.clone()}
        outputs = []
        for token in tokens:
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        self._calls.add_(1)
        late = self._calls > 64
        with torch.no_grad():
            self.prompt_sum.copy_(torch.where(late, state["sum"], self.prompt_sum))
            self.prompt_count.copy_(torch.where(late, state["count"], self.prompt_count))
        return torch.stack(outputs)


decoder = PromptedDecoder()
