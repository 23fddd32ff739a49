"""The interpreter's tests scan one model, alpha, under the common test file their module writes."""

import pytest

from tests.skips.conftest import write_tree
from tests.skips.models.test_runtime_skips import LIBRARY, MODEL_TEST


def scan_alpha(make_repo, scan, common: str) -> dict:
    """The scan of alpha under ``common``, the text of tests/test_modeling_common.py."""
    files = {
        "tests/test_modeling_common.py": common,
        "tests/models/alpha/test_modeling_alpha.py": MODEL_TEST.format(name="Alpha", bos=1),
    }
    return scan(write_tree(make_repo(files), LIBRARY))


@pytest.fixture
def results(request, make_repo, scan):
    """The scan of alpha under the test module's ``COMMON``."""
    return scan_alpha(make_repo, scan, request.module.COMMON)
