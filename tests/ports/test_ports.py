"""The hand-written ports compute what their reference computes, and each planted bug changes it."""

import pytest
import torch

from tests.ports import Style
from tests.ports.catalog import ARCHITECTURES, styles

pytestmark = pytest.mark.integration
pytest.importorskip("transformers")


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_a_correct_port_agrees_and_every_bug_changes_the_output(name):
    architecture = ARCHITECTURES[name]
    reference, inputs = architecture.reference(), architecture.inputs()
    with torch.no_grad():
        expected = architecture.final_output(reference, inputs)
        for style in styles(architecture):
            for bug in architecture.Bug:
                port = architecture.port(reference, style, bug)
                difference = (architecture.final_output(port, inputs) - expected).abs().max().item()
                if bug is architecture.Bug.NONE:
                    assert difference <= 2e-5, (style, difference)
                else:
                    assert difference > 1e-4, (style, bug, difference)


def test_the_gemma_port_may_scale_its_embeddings_in_its_forward():
    from tests.ports import gemma

    reference, input_ids = gemma.reference(), gemma.inputs()
    port = gemma.port(reference, Style.PLAIN, scale_in_forward=True)
    with torch.no_grad():
        assert torch.equal(gemma.final_output(port, input_ids), gemma.final_output(reference, input_ids))
    assert type(port.tok_embeddings) is torch.nn.Embedding
