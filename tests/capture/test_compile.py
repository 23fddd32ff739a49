"""`@capture_outputs` inside `torch.compile`: the same outputs as eager, and no capture where none is asked.

The default (inductor) backend took 50 s on this loaded 2-core machine, so `make test` compiles
with the ``eager`` backend, which runs the same Dynamo tracing of the decorator and its hooks without
generating kernels. ``MODEL_DEBUGGING_SLOW=1`` adds the default backend.
"""

from __future__ import annotations

import os

import pytest
import torch

BACKENDS = [
    "eager",
    pytest.param(
        "inductor",
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(
                os.environ.get("MODEL_DEBUGGING_SLOW") != "1",
                reason="set MODEL_DEBUGGING_SLOW=1 (about 50 s)",
            ),
        ],
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_capture_inside_torch_compile_matches_eager(toy, backend):
    torch._dynamo.reset()
    model = toy.Decoder(toy.config(num_hidden_layers=2)).eval()
    model.layers.append(toy.Block(8, cross=False))  # a layer added before compiling is recorded too
    eager = model(toy.input_ids, output_hidden_states=[0, -1], output_attentions=True)
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        out = compiled(toy.input_ids, output_hidden_states=[0, -1], output_attentions=True)
        plain = compiled(toy.input_ids)
    torch.testing.assert_close(out.hidden_states, eager.hidden_states)
    torch.testing.assert_close(out.attentions, eager.attentions)
    assert len(out.hidden_states) == 2 and len(out.attentions) == 3
    assert plain.hidden_states is None and plain.attentions is None
