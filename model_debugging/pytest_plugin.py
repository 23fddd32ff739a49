"""A pytest plugin that records what a run did to each test, for ``model-debugging scan --observed``.

Off unless asked. ``pytest --observed-json run.json`` writes one record of every item: its outcome
and skip reason, the test function it runs, and for a pass how many assertions it reached, so a
test that passes without checking anything is seen. ``--observed-ignore-skips`` also runs the tests
an unconditional skip decorator (``@unittest.skip``, ``@pytest.mark.skip``, on the test or its
class) turns off, to see which skips are stale; conditional ones (``skipIf``, ``skipUnless``, the
``require_*`` decorators built on them) and skips in the test's body still skip.
``--observed-select FILE`` runs only the tests a file lists (``file::Class::test`` lines, which
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

import ast
import fnmatch
import functools
import importlib
import inspect
import sys
import textwrap
import types
import unittest
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from model_debugging import assertions
from model_debugging.reporting.atomic import atomic_write_json
from model_debugging.run_record import FORMAT

# Assertion functions of the libraries tests use, by module; counted where tests bound them.
COUNTED_FUNCTIONS = {
    "torch.testing": ("assert_close", "assert_allclose"),
    "numpy.testing": (
        "assert_allclose",
        "assert_almost_equal",
        "assert_array_almost_equal",
        "assert_array_equal",
        "assert_array_less",
        "assert_equal",
    ),
    "pytest": tuple(sorted(assertions.CALLS)),
}
_REPORT_KEY = "model_debugging_observed"  # the extra a report carries from a worker to the controller
_IGNORED = "_model_debugging_skip_ignored"  # set on a test or class whose skip decorator was ignored
_REASON_LENGTH = 500


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("model-debugging", "record a run for model-debugging scan --observed")
    group.addoption(
        "--observed-json",
        metavar="PATH",
        help="write every item's outcome, skip reason and assertions reached to PATH (JSON)",
    )
    group.addoption(
        "--observed-ignore-skips",
        action="store_true",
        help="run tests an unconditional @unittest.skip / @pytest.mark.skip turns off (needs --observed-json)",
    )
    group.addoption(
        "--observed-select",
        metavar="PATH",
        help="run only the tests PATH lists, one file::Class::test a line, with the cases an expanded "
        "test adds (needs --observed-json)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("observed_json")
    ignore_skips, select = config.getoption("observed_ignore_skips"), config.getoption("observed_select")
    if path is None:
        for given, option in ((ignore_skips, "--observed-ignore-skips"), (select, "--observed-select")):
            if given:
                raise pytest.UsageError(f"{option} needs --observed-json PATH to record the run")
        return
    target = Path(path)
    if target.is_dir():
        raise pytest.UsageError(f"--observed-json {path}: is a directory")
    target.parent.mkdir(parents=True, exist_ok=True)  # as --junitxml does
    selection = _selection(select) if select else None
    config.pluginmanager.register(
        _Recorder(config, target, ignore_skips, selection), "model_debugging_recorder"
    )


def _selection(path: str) -> frozenset[str]:
    """The ``file::Class::test`` lines of ``path`` (blank lines and ``#`` comments aside)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise pytest.UsageError(f"--observed-select {path}: cannot read it ({error})") from None
    selected = set()
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if line and not line.startswith("#"):
            if line.count("::") != 2:
                raise pytest.UsageError(f"{path}:{number}: expected file::Class::test, got {line[:80]!r}")
            selected.add(line)
    return frozenset(selected)


class _Counter:
    """Assertions reached by the test running now (None between tests)."""

    value: int | None = None

    @classmethod
    def hit(cls) -> None:
        if cls.value is not None:
            cls.value += 1


def _counted(function: Callable) -> Callable:
    @functools.wraps(function)
    def counted(*args: Any, **kwargs: Any) -> Any:
        _Counter.hit()
        return function(*args, **kwargs)

    return counted


class _Recorder:
    """The hooks of a recording run; registered only when ``--observed-json`` is given."""

    def __init__(
        self, config: pytest.Config, path: Path, ignore_skips: bool, selection: frozenset[str] | None
    ):
        self.config, self.path, self.ignore_skips, self.selection = config, path, ignore_skips, selection
        self.counts_statements = bool(config.getini("enable_assertion_pass_hook"))
        self.items: dict[str, dict[str, Any]] = {}
        self.stale_modules: set[str] = set()
        self.ignored_marks: dict[str, str] = {}
        self._undo: list[Callable[[], None]] = []
        self._reached: dict[str, int | None] = {}
        self._checks: dict[types.CodeType, bool | None] = {}
        self._patch_test_case()
        if ignore_skips:
            self._ignore_skip_decorators()

    # -- set up and undo ---------------------------------------------------------------------------
    def _set(self, owner: Any, name: str, value: Any) -> None:
        before = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, before))

    def _patch_test_case(self) -> None:
        for name, method in list(vars(unittest.TestCase).items()):
            if name.startswith("assert") and callable(method):
                self._set(unittest.TestCase, name, _counted(method))

    def _ignore_skip_decorators(self) -> None:
        """``unittest.skip`` written in a test module leaves the test as it is (marked); called
        elsewhere (a library's ``require_*`` helper deciding on the machine), and through
        ``skipIf``/``skipUnless``, it skips as before."""
        original = unittest.case.skip
        patterns = self.config.getini("python_files")

        def skip(reason: str) -> Callable:
            caller = Path(sys._getframe(1).f_code.co_filename).name
            if not any(fnmatch.fnmatch(caller, pattern) for pattern in patterns):
                return original(reason)

            def keep(test_item: Any) -> Any:
                setattr(test_item, _IGNORED, str(reason))
                return test_item

            return keep

        def skip_if(condition: object, reason: str) -> Callable:
            return original(reason) if condition else (lambda test_item: test_item)

        def skip_unless(condition: object, reason: str) -> Callable:
            return skip_if(not condition, reason)

        for module in (unittest, unittest.case):
            self._set(module, "skip", skip)
            self._set(module, "skipIf", skip_if)
            self._set(module, "skipUnless", skip_unless)

    def pytest_unconfigure(self) -> None:
        for undo in reversed(self._undo):
            undo()

    # -- collection --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.selection is not None:
            kept = [item for item in items if self._selected(item)]
            kept_ids = {id(item) for item in kept}
            self.config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept_ids])
            items[:] = kept
        if not self.ignore_skips:
            return
        removed: dict[int, str] = {}  # node (a class or module is shared by its items) -> reason
        for item in items:
            for node in item.listchain():
                marks = [mark for mark in node.own_markers if mark.name == "skip"]
                for mark in marks:
                    node.own_markers.remove(mark)
                    removed[id(node)] = str(mark.kwargs.get("reason", mark.args[0] if mark.args else ""))
                if id(node) in removed:
                    self.ignored_marks[item.nodeid] = removed[id(node)]

    def _selected(self, item: pytest.Item) -> bool:
        """Whether the selection lists the item's file, class and test (its own test for a case)."""
        cls = getattr(item, "cls", None)
        name = getattr(_test_function(item), "__name__", item.name)
        return f"{item.nodeid.split('::', 1)[0]}::{cls.__name__ if cls else ''}::{name}" in self.selection

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The libraries' assertion functions are counted once the test modules have imported them
        (``numpy.testing`` is imported on first use: it is imported here when numpy is)."""
        for module_name, names in COUNTED_FUNCTIONS.items():
            if module_name.partition(".")[0] not in sys.modules:
                continue
            module = importlib.import_module(module_name)
            for name in names:
                original = getattr(module, name, None)
                if callable(original):
                    self._rebind(original, _counted(original))
        if self.counts_statements:
            modules = {item.module for item in session.items if getattr(item, "module", None) is not None}
            self.stale_modules = {
                module.__file__ or module.__name__
                for module in modules
                if _rewritten_without_pass_hook(module)
            }

    def _rebind(self, original: Callable, counted: Callable) -> None:
        """Every module global bound to ``original`` (``from torch.testing import assert_close``)."""
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if value is original:
                    self._set(module, name, counted)

    # -- running -----------------------------------------------------------------------------------
    def pytest_assertion_pass(self) -> None:
        _Counter.hit()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        _Counter.value = 0
        try:
            return (yield)
        finally:
            self._reached[item.nodeid] = _Counter.value
            _Counter.value = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        report = yield
        if call.when == "setup" or call.when == "call":
            function = _test_function(item)
            module = getattr(item, "module", None)
            counted = self.counts_statements and getattr(module, "__file__", None) not in self.stale_modules
            ignored = self.ignored_marks.get(item.nodeid) or _ignored_reason(item, function)
            setattr(
                report,
                _REPORT_KEY,
                {
                    "test": getattr(function, "__name__", None) or getattr(item, "originalname", item.name),
                    "assertions": self._reached.pop(item.nodeid, None) if counted else None,
                    "checks": self._checks_of(function),
                    "skip_ignored": ignored,
                },
            )
        return report

    def _checks_of(self, function: Any) -> bool | None:
        code = getattr(function, "__code__", None)
        if code is None:
            return None
        if code not in self._checks:
            self._checks[code] = _holds_assertion(function)
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


def _test_function(item: pytest.Item) -> Any:
    """The function an item runs, under ``parameterized.expand``'s case and decorators that wrap it."""
    function = getattr(item, "obj", None)
    function = getattr(function, "place_as", function)  # parameterized keeps its test here
    return inspect.unwrap(function) if callable(function) else function


def _ignored_reason(item: pytest.Item, function: Any) -> str | None:
    for owner in (function, getattr(item, "cls", None)):
        reason = getattr(owner, _IGNORED, None)
        if reason is not None:
            return reason
    return None


def _holds_assertion(function: Any) -> bool | None:
    """Whether ``function``'s own body holds an assertion (None: its source cannot be read)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    return assertions.holds(tree, assertions.is_assertion)


def _rewritten_without_pass_hook(module: types.ModuleType) -> bool:
    """Whether pytest's rewritten asserts in ``module`` never call the pass hook: it loaded them
    from a cache written before the hook was enabled."""
    names: set[str] = set()
    stack = [
        value.__code__
        for owner in (module, *(value for value in vars(module).values() if isinstance(value, type)))
        for value in vars(owner).values()
        if isinstance(value, types.FunctionType)
    ]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(constant for constant in code.co_consts if isinstance(constant, types.CodeType))
    return "_format_explanation" in names and "_check_if_assertion_pass_impl" not in names
