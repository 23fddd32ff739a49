"""A pytest plugin that records what a run did to each test, for ``model-debugging scan --observed``.

Off unless asked. ``pytest --observed_json run.json`` writes one record of every item: its outcome
and skip reason, the test function it runs, and for a pass how many assertions it reached, so a
test that passes without checking anything is seen. ``--observed_ignore_skips`` also runs the tests
an unconditional skip decorator (``@unittest.skip``, ``@pytest.mark.skip``, on the test or its
class) turns off, to see which skips are stale; conditional ones (``skipIf``, ``skipUnless``, the
``require_*`` decorators built on them) and skips in the test's body still skip; a skipped
override that does nothing runs the definition it overrides. ``--observed_select FILE`` runs only the tests a file lists (``file::Class::test`` lines, which
``scan --stale_skips`` writes), with the cases a ``parameterized.expand`` test adds.

Assertions counted: calls of ``unittest.TestCase.assert*``, of ``torch.testing`` and
``numpy.testing`` assertion functions and of ``pytest.raises``/``pytest.warns``, and ``assert``
statements through pytest's ``pytest_assertion_pass`` hook, which needs
``-o enable_assertion_pass_hook=true`` (the record says whether it was on; a test module pytest
had cached rewritten without the hook is reported, its items' counts left unknown).

Installed with model-debugging, pytest loads it from its entry point; ``-p
model_debugging.pytest_plugin`` loads it where plugin autoloading is off. Works under pytest-xdist:
the workers count, the controller writes the file. The file's format: :mod:`model_debugging.run_record`.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_debugging.pytest_plugin.counting import (
    Counter,
    count_library_assertions,
    count_test_case_assertions,
    holds_assertion,
    rewritten_without_pass_hook,
)
from model_debugging.pytest_plugin.items import item_function
from model_debugging.pytest_plugin.patches import Patches
from model_debugging.pytest_plugin.selection import keep_selected, read_selection
from model_debugging.pytest_plugin.skips import (
    ignore_skip_decorators,
    ignored_reason,
    remove_skip_marks,
    run_overridden,
)
from model_debugging.reporting.atomic import atomic_write_json
from model_debugging.run_record import FORMAT

_REPORT_KEY = "model_debugging_observed"  # the extra a report carries from a worker to the controller
_REASON_LENGTH = 500


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("model-debugging", "record a run for model-debugging scan --observed")
    group.addoption(
        "--observed_json",
        metavar="PATH",
        help="write every item's outcome, skip reason and assertions reached to PATH (JSON)",
    )
    group.addoption(
        "--observed_ignore_skips",
        action="store_true",
        help="run tests an unconditional @unittest.skip / @pytest.mark.skip turns off (needs --observed_json)",
    )
    group.addoption(
        "--observed_select",
        metavar="PATH",
        help="run only the tests PATH lists, one file::Class::test a line, with the cases an expanded "
        "test adds (needs --observed_json)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("observed_json")
    ignore_skips, select = config.getoption("observed_ignore_skips"), config.getoption("observed_select")
    if path is None:
        for given, option in ((ignore_skips, "--observed_ignore_skips"), (select, "--observed_select")):
            if given:
                raise pytest.UsageError(f"{option} needs --observed_json PATH to record the run")
        return
    target = Path(path)
    if target.is_dir():
        raise pytest.UsageError(f"--observed_json {path}: is a directory")
    target.parent.mkdir(parents=True, exist_ok=True)  # as --junitxml does
    selection = read_selection(select) if select else None
    config.pluginmanager.register(
        _Recorder(config, target, ignore_skips, selection), "model_debugging_recorder"
    )


class _Recorder:
    """The hooks of a recording run; registered only when ``--observed_json`` is given."""

    def __init__(
        self, config: pytest.Config, path: Path, ignore_skips: bool, selection: frozenset[str] | None
    ):
        self.config, self.path, self.ignore_skips, self.selection = config, path, ignore_skips, selection
        self.counts_statements = bool(config.getini("enable_assertion_pass_hook"))
        self.items: dict[str, dict[str, Any]] = {}
        self.stale_modules: set[str] = set()
        self.ignored: dict[str, str] = {}  # node id -> the reason of a skip the run ignored
        self.overridden: set[str] = set()  # node ids that run the definition a no-op override overrides
        self.patches = Patches()
        self._reached: dict[str, int | None] = {}
        self._checks: dict[types.CodeType, bool | None] = {}
        count_test_case_assertions(self.patches)
        if ignore_skips:
            ignore_skip_decorators(self.patches, config)

    def pytest_unconfigure(self) -> None:
        self.patches.undo()

    # -- collection --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.selection is not None:
            keep_selected(self.config, items, self.selection)
        if self.ignore_skips:
            self.ignored.update(remove_skip_marks(items))
            overridden = run_overridden(items, self.patches)
            self.ignored.update(overridden)
            self.overridden.update(overridden)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        count_library_assertions(self.patches)
        if self.counts_statements:
            modules = {item.module for item in session.items if getattr(item, "module", None) is not None}
            self.stale_modules = {
                module.__file__ or module.__name__
                for module in modules
                if rewritten_without_pass_hook(module)
            }

    # -- running -----------------------------------------------------------------------------------
    def pytest_assertion_pass(self) -> None:
        Counter.hit()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        Counter.value = 0
        try:
            return (yield)
        finally:
            self._reached[item.nodeid] = Counter.value
            Counter.value = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        report = yield
        if call.when == "setup" or call.when == "call":
            function = item_function(item)
            module = getattr(item, "module", None)
            counted = self.counts_statements and getattr(module, "__file__", None) not in self.stale_modules
            setattr(
                report,
                _REPORT_KEY,
                {
                    "test": getattr(function, "__name__", None) or getattr(item, "originalname", item.name),
                    "assertions": self._reached.pop(item.nodeid, None) if counted else None,
                    "checks": self._checks_of(function),
                    "skip_ignored": self.ignored.get(item.nodeid) or ignored_reason(item),
                    "runs_overridden": item.nodeid in self.overridden,
                },
            )
        return report

    def _checks_of(self, function: Any) -> bool | None:
        code = getattr(function, "__code__", None)
        if code is None:
            return None
        if code not in self._checks:
            self._checks[code] = holds_assertion(function)
        return self._checks[code]

    # -- the record --------------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.items.setdefault(report.nodeid, {"nodeid": report.nodeid, "outcome": None, "reason": ""})
        extra = getattr(report, _REPORT_KEY, None)
        if extra is not None:
            entry.update(extra)
        outcome, reason = _phase_outcome(report)
        if outcome is None:
            return
        if entry["outcome"] in (None, "passed", "xpassed") or outcome == "skipped":
            entry["outcome"], entry["reason"] = outcome, reason

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput"):
            return
        write = terminalreporter.write_line
        write(f"model-debugging: recorded {len(self.items)} items in {self.path}")
        if not self.counts_statements:
            write(
                "model-debugging: assert statements not counted (run with -o enable_assertion_pass_hook=true)"
            )
        for module in sorted(self.stale_modules):
            write(
                f"model-debugging: {module} was rewritten by an earlier run without the assertion pass hook: "
                "its items' assertions are not counted (delete its __pycache__ and run again)"
            )

    def pytest_sessionfinish(self) -> None:
        if hasattr(self.config, "workerinput"):  # an xdist worker: the controller writes the record
            return
        items = []
        for entry in self.items.values():
            if entry["outcome"] is None:
                continue
            if entry["outcome"] not in ("passed", "xpassed"):
                entry["assertions"] = None
            items.append(entry)
        atomic_write_json(
            self.path,
            {
                "format": FORMAT,
                "ignores_skip_decorators": self.ignore_skips,
                "counts_assert_statements": self.counts_statements,
                "items": items,
            },
        )


def _phase_outcome(report: pytest.TestReport) -> tuple[str | None, str]:
    """What one phase says of the item: None when it changes nothing (a passing setup or teardown)."""
    xfail = hasattr(report, "wasxfail")
    if report.skipped:
        if xfail:
            return "xfailed", str(report.wasxfail)
        longrepr = report.longrepr
        message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        return "skipped", message.removeprefix("Skipped: ")
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)
        return ("failed" if report.when == "call" else "error"), message[:_REASON_LENGTH]
    if report.when == "call":
        return ("xpassed" if xfail else "passed"), ""
    return None, ""
