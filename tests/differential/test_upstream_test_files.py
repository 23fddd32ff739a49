"""transformers' own tests of the debugger and the patch registry, run against this project.

The README says code written against transformers runs with only its import lines changed. These
are transformers' own test files (``fixture_trees/upstream_tests``, verbatim), with exactly their
imports of the re-implemented modules pointed at ``model_debugging``, run by pytest as a user runs
them: every test must pass, none skip.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

UPSTREAM_TESTS = Path(__file__).parent / "fixture_trees" / "upstream_tests"
# transformers' module -> ours; nothing else of the files is changed
OUR_MODULES = {
    "transformers.model_debugging_utils": "model_debugging.model_debugging_utils",
    "transformers.monkey_patching": "model_debugging.monkey_patching",
    "transformers.utils.output_capturing": "model_debugging.output_capturing",
}
TEST_COUNTS = {"test_model_debugging_utils.py": 2, "test_monkey_patching.py": 14}


def _pointed_at_ours(text: str) -> str:
    for theirs, ours in OUR_MODULES.items():
        text = text.replace(f"from {theirs} import", f"from {ours} import")
    return text


@pytest.mark.parametrize("name", sorted(TEST_COUNTS))
def test_upstreams_own_test_file_passes_with_only_its_imports_changed(name, tmp_path):
    original = (UPSTREAM_TESTS / name).read_text()
    ours = _pointed_at_ours(original)
    changed = [
        after
        for before, after in zip(original.splitlines(), ours.splitlines(), strict=True)
        if before != after
    ]
    assert changed, f"{name} imports none of the re-implemented modules"
    assert all(re.fullmatch(r"from model_debugging\.[\w.]+ import.*", line) for line in changed)
    (tmp_path / name).write_text(ours)

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}", name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert re.search(rf"\b{TEST_COUNTS[name]} passed\b", run.stdout), run.stdout[-2000:]
    assert "skipped" not in run.stdout, run.stdout[-2000:]
