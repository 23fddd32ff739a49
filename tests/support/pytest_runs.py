"""Run real pytest on a generated checkout: what it did with each test (``pytest_verdicts``), or
the reports transformers' CI writes (``run_pytest``).

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
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
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


def pytest_verdicts(root) -> dict[tuple[str, str], tuple[str, str]]:
    """(model, test) -> ("ran" | "skipped", pytest's skip message) from a real pytest run.

    A module that skips itself when imported is one skipped case named after the module: each
    test of the model is skipped with its message. A module that cannot be imported is one error
    case: none of its tests is collected."""
    report = root / "junit.xml"
    settings = root / "pytest.ini"  # an empty one of its own, so no project settings leak in
    settings.write_text("[pytest]\n")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/models",
        "-q",
        "-p",
        "no:cacheprovider",
        "-c",
        str(settings),
        "--continue-on-collection-errors",
    ]
    subprocess.run([*command, "--rootdir", str(root), f"--junitxml={report}"], cwd=root, capture_output=True)
    outcomes: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for case in ElementTree.parse(report).iter("testcase"):
        skipped = case.find("skipped")
        if not case.get("classname"):  # the module, at collection
            if skipped is not None:
                _, _, message = ast.literal_eval(skipped.text)
                message = message.removeprefix("unittest.case.SkipTest: ")
                for test in ("test_forward", "test_training"):
                    outcomes[case.get("name").split(".")[2], test].append(("skipped", message))
            continue
        model = case.get("classname").split(".")[2]
        outcome = ("skipped", skipped.get("message", "")) if skipped is not None else ("ran", "")
        outcomes[model, case.get("name")].append(outcome)
    verdicts = {}
    for pair, found in outcomes.items():
        ran = [outcome for outcome in found if outcome[0] == "ran"]
        verdicts[pair] = ran[0] if ran else found[0]
    return verdicts
