import unittest

from transformers.testing_utils import require_torch_gpu


class ModelTesterMixin:
    model_tester = None
    all_model_classes = ()
    test_resize_embeddings = True
    has_attentions = True

    def test_forward(self):
        config, inputs = self.model_tester.prepare_config_and_inputs_for_common()
        for model_class in self.all_model_classes:
            model_class(config)(**inputs)

    def test_training(self):
        if not self.model_tester.is_training:
            self.skipTest(reason="ModelTester is not configured to run training tests")
        self.run_training()

    def test_resize_tokens_embeddings(self):
        if not self.test_resize_embeddings:
            self.skipTest(reason="test_resize_embeddings is set to `False`")
        self.run_resize()

    def test_attention_outputs(self):
        if not self.has_attentions:
            self.skipTest(reason="Model does not output attentions")
        self.run_attentions()

    def test_inputs_embeds(self):
        self.run_inputs_embeds()

    @require_torch_gpu
    def test_multi_gpu_forward(self):
        self.run_on_gpus()
