import unittest

from transformers.testing_utils import require_torch_gpu

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester


class TinyLlamaModelTester(CausalLMModelTester):
    pass


class TinyLlamaModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = TinyLlamaModelTester

    @unittest.skip(
        reason="TinyLlama ties its input embeddings; "
        "inputs_embeds is tested in test_forward"
    )
    def test_inputs_embeds(self):
        pass

    @require_torch_gpu
    def test_beam_search_generate(self):
        super().test_beam_search_generate()
