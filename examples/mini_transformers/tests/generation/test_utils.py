import pytest


class GenerationTesterMixin:
    max_new_tokens = 3

    @pytest.mark.generate
    def test_greedy_generate(self):
        self.run_greedy()

    @pytest.mark.generate
    def test_beam_search_generate(self):
        self.run_beam_search()
