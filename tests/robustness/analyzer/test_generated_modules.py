"""Random valid test modules mixing every skip pattern: the scan equals the answer known from the spec."""

import random
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import synthetic
from tests.support.scanning import scan_json

EXAMPLES = 100


@settings(settings.get_profile("analyzer-robustness"), max_examples=EXAMPLES)
@given(data=st.data())
def test_scan_of_a_generated_checkout_equals_its_spec(specs, data):
    spec = data.draw(specs)
    with tempfile.TemporaryDirectory() as root:
        synthetic.write_checkout(spec, root)
        results, errors = scan_json(root, use_cache=False, jobs=1)
    assert errors == []
    assert results == synthetic.expected_results(spec)


def test_a_checkout_using_every_pattern_scans_exactly_in_parallel(tmp_path):
    spec = synthetic.random_checkout(random.Random(7), 40, common_tests=6, generation_tests=3)
    used = {
        override.pattern for model in spec.models for cls in model.classes for _, override in cls.overrides
    }
    assert used == set(synthetic.PATTERNS)
    synthetic.write_checkout(spec, tmp_path)
    results, errors = scan_json(tmp_path, use_cache=False, jobs=2)
    assert errors == []
    assert results == synthetic.expected_results(spec)
