"""Hypothesis strategies over generated checkouts (``tests/support/synthetic.py``), as fixtures.

Every property runs with a fixed number of examples, derandomized, so CI draws the same cases each
run; ``EXAMPLES`` records how many each property generates.
"""

import string

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tests.support import synthetic

settings.register_profile(
    "analyzer-robustness",
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],  # no slow "explain" phase in CI
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

WORDS = st.lists(
    st.text(string.ascii_letters + string.digits, min_size=1, max_size=8), min_size=1, max_size=4
)
# Any text but surrogates: quotes, backslashes, newlines and non-ASCII end up in string literals.
REASONS = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=24)


@st.composite
def overrides(draw, tests):
    chosen = draw(st.lists(st.sampled_from(tests), unique=True, max_size=len(tests)))
    found = []
    for test in chosen:
        pattern = draw(st.sampled_from(sorted(synthetic.PATTERNS)))
        reason = " ".join(draw(WORDS)) if pattern in synthetic.WORD_PATTERNS else draw(REASONS)
        found.append((test, synthetic.Override(pattern, reason)))
    return tuple(found)


@st.composite
def checkout_specs(draw, max_models=4):
    common_tests, generation_tests = draw(st.integers(0, 3)), draw(st.integers(0, 2))
    probe = synthetic.CheckoutSpec((), common_tests, generation_tests)
    tests = synthetic.common_test_names(probe) + synthetic.generation_test_names(probe)
    names = draw(
        st.lists(
            st.from_regex(r"[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,4})?", fullmatch=True),
            min_size=1,
            max_size=max_models,
            unique=True,
        )
    )
    models = []
    for name in names:
        classes = draw(
            st.lists(
                st.builds(
                    synthetic.ClassSpec,
                    overrides=overrides(tests),
                    generation=st.booleans(),
                    has_attentions=st.sampled_from((None, True, False)),
                    is_training=st.sampled_from((None, True, False)),
                    class_skip=st.none() | st.none() | st.none() | REASONS,  # 1 in 4 skips the class
                    slow=st.booleans(),
                    class_mark=st.none() | st.none() | st.none() | REASONS,
                    setup_skip=st.none() | st.none() | st.none() | REASONS,
                    hidden=st.sampled_from((False, False, False, True)),
                ),
                min_size=1,
                max_size=2,
            )
        )
        module_mark = draw(st.none() | st.none() | st.none() | st.none() | REASONS)
        models.append(synthetic.ModelSpec(name, tuple(classes), draw(st.integers(0, 2)), module_mark))
    return synthetic.CheckoutSpec(tuple(models), common_tests, generation_tests)


@pytest.fixture(scope="session")
def specs():
    """The strategy drawing whole checkout specs (draw it with ``data.draw(specs)``)."""
    return checkout_specs()
