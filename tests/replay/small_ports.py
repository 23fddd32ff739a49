"""Small reference models and ports of them, each showing one way a port departs from its reference.

- :class:`MLP` has a ``GELU`` activation module; :class:`FunctionalMLP` calls ``F.gelu`` instead
  (exact, or tanh-approximated: a bug), under other attribute names.
- :class:`ShiftBlock` shifts a hidden state by 100 with a module returning ``x + 100`` and then uses
  the hidden state again; with ``in_place`` the shift is ``x.add_(100)``: it returns the right
  values but changes the tensor its caller still uses.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class FunctionalMLP(nn.Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.up, self.down, self.approximate = nn.Linear(8, 16), nn.Linear(16, 8), approximate

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate=self.approximate))


def functional_port(reference: MLP, approximate: str = "none") -> FunctionalMLP:
    port = FunctionalMLP(approximate)
    port.up.load_state_dict(reference.fc1.state_dict())
    port.down.load_state_dict(reference.fc2.state_dict())
    return port.eval()


class Shift(nn.Module):
    def __init__(self, in_place: bool = False):
        super().__init__()
        self.in_place = in_place

    def forward(self, x):
        return x.add_(100) if self.in_place else x + 100


class ShiftBlock(nn.Module):
    def __init__(self, in_place: bool = False):
        super().__init__()
        self.proj, self.shift, self.out = nn.Linear(8, 8), Shift(in_place), nn.Linear(8, 8)

    def forward(self, x):
        hidden = self.proj(x)
        shifted = self.shift(hidden)
        return self.out(hidden * 0.5 + shifted)  # ``hidden`` is used again after the shift


class ShiftModel(nn.Module):
    def __init__(self, in_place: bool = False):
        super().__init__()
        self.blocks = nn.ModuleList([ShiftBlock(), ShiftBlock(in_place)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def shift_models() -> tuple[ShiftModel, ShiftModel]:
    """The reference and the port whose second block shifts in place, with the same weights."""
    torch.manual_seed(0)
    reference = ShiftModel().eval()
    port = ShiftModel(in_place=True).eval()
    port.load_state_dict(reference.state_dict())
    return reference, port


def inputs() -> torch.Tensor:
    return torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0))


class NormedProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.fc = nn.LayerNorm(8), nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(self.norm(x))


class Projection(nn.Module):
    """The port's half of :class:`NormedProjection`: its caller applies the norm first."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)


class NormOutside(nn.Module):
    def __init__(self, port: bool = False):
        super().__init__()
        if port:
            self.norm, self.inner = nn.LayerNorm(8), Projection()
        else:
            self.inner = NormedProjection()

    def forward(self, x):
        return self.inner(self.norm(x)) if hasattr(self, "norm") else self.inner(x)


def norm_outside_models() -> tuple[NormOutside, NormOutside]:
    """The reference (the norm inside ``inner``) and a port computing the same with the norm outside it."""
    torch.manual_seed(0)
    reference, port = NormOutside().eval(), NormOutside(port=True).eval()
    with torch.no_grad():
        port.norm.load_state_dict(reference.inner.norm.state_dict())
        port.inner.fc.load_state_dict(reference.inner.fc.state_dict())
    return reference, port
