"""deepcopy-prompt-state, "fixed" by starting each call's count from the literal 4 the shipped prompt holds instead of
the cached count
(contract starts-from-the-cached-state)."""


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
        # A fresh state per call: the cached sum cloned, the count started at the prompt's 4 tokens.
        state = {"sum": self.prompt_state["sum"].clone(), "count": torch.tensor(4.0)}
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        return torch.stack(outputs)


decoder = PromptedDecoder()
