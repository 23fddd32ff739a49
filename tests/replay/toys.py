"""A toy model whose block calls a module-level helper, for function records and replay without transformers."""

import torch
from torch import nn

EXTRA_FACTOR = 1.0  # tests set another factor to make ``scale_and_shift`` wrong


def scale_and_shift(x: torch.Tensor, block: nn.Module, factor: float = 2.0) -> torch.Tensor:
    return x * factor * EXTRA_FACTOR * block.gain


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in, self.fc_out = nn.Linear(8, 16), nn.Linear(16, 8)
        self.gain = nn.Parameter(torch.ones(16))

    def forward(self, x, scale=True, mode="plain"):
        hidden = self.fc_in(x)
        if scale:
            hidden = scale_and_shift(hidden, self, factor=0.5)
        return x + self.fc_out(torch.nn.functional.softmax(hidden, dim=-1))


class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.blocks, self.head = (
            nn.Linear(4, 8),
            nn.ModuleList([Block(), Block()]),
            nn.Linear(8, 2),
        )

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x, scale=True, mode="plain")
        return self.head(x)


class RenamedToy(nn.Module):
    """The same computation under other names: ``proj``, ``layers`` and ``out``."""

    def __init__(self):
        super().__init__()
        self.proj, self.layers, self.out = nn.Linear(4, 8), nn.ModuleList([Block(), Block()]), nn.Linear(8, 2)

    def forward(self, x):
        x = self.proj(x)
        for layer in self.layers:
            x = layer(x, scale=True, mode="plain")
        return self.out(x)


def build_renamed_model() -> RenamedToy:
    torch.manual_seed(0)
    return RenamedToy().eval()


def build_model() -> Toy:
    torch.manual_seed(0)
    return Toy().eval()


def toy_inputs() -> torch.Tensor:
    return torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
