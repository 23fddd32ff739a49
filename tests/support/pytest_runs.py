"""Run real pytest on a generated checkout, writing the reports transformers' CI writes.

``make_reports_files()`` gives transformers' own ``conftest.py`` hook for ``--make-reports``, and
a ``testing_utils.py`` holding upstream's ``pytest_terminal_summary_main`` copied from the installed
``transformers`` (its module costs seconds to import; the function needs only pytest), so the
``summary_short.txt`` and ``stats.txt`` files are the ones the CI writes.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

_CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--make-reports", action="store", default=False, help="generate report files")


def pytest_terminal_summary(terminalreporter):
    from testing_utils import pytest_terminal_summary_main  # as transformers imports it: not a hook

    make_reports = terminalreporter.config.getoption("--make-reports")
    if make_reports:
        pytest_terminal_summary_main(terminalreporter, id=make_reports)
"""


def make_reports_files() -> dict[str, str]:
    """``conftest.py`` and ``testing_utils.py`` at a checkout's root, giving pytest transformers'
    ``--make-reports=<id>`` (which writes reports/<id>/*.txt)."""
    origin = importlib.util.find_spec("transformers.testing_utils").origin
    source = Path(origin).read_text(encoding="utf-8")
    tree = ast.parse(source)
    function = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "pytest_terminal_summary_main"
    )
    upstream = "import re\nfrom pathlib import Path\n\n\n" + ast.get_source_segment(source, function) + "\n"
    return {"conftest.py": _CONFTEST, "testing_utils.py": upstream}


def run_pytest(
    root: Path, *args: str, env: dict[str, str] | None = None, autoload: bool = False
) -> subprocess.CompletedProcess:
    """pytest on ``root`` with settings of its own (none of this project's leak in), from ``root``.

    Without ``autoload``, only our plugin is loaded (``-p``), not every plugin installed here."""
    settings = root / "pytest.ini"
    if not settings.exists():
        settings.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(settings)]
    if not autoload:
        command += ["-p", "model_debugging.pytest_plugin"]
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})}
    return subprocess.run(
        [*command, "--rootdir", str(root), *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
