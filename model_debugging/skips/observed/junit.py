"""Read pytest's junit XML (``--junitxml``): one ``<testcase>`` per item.

A case's ``classname`` is its node id made dotted (``tests.models.bert.test_modeling_bert.
BertModelTest``; a test function outside a class has the module alone); ``<skipped>`` carries the
skip reason in ``message`` and ``path:line: reason`` as text (an expected failure has the type
``pytest.xfail``), ``<failure>`` and ``<error>`` a failure. A test file that could not be imported
is one erroring case named after the module.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from model_debugging.skips.observed.records import ReportError, RunItem, RunOutcome

ROOTS = ("testsuites", "testsuite")
_SKIP_PREFIX = "Skipped: "


def _outcome(case: ElementTree.Element) -> tuple[RunOutcome, str]:
    skipped = case.find("skipped")
    if skipped is not None:
        if skipped.get("type") == "pytest.xfail":
            return RunOutcome.XFAILED, skipped.get("message", "")
        return RunOutcome.SKIPPED, skipped.get("message", "").removeprefix(_SKIP_PREFIX)
    for tag, outcome in (("failure", RunOutcome.FAILED), ("error", RunOutcome.ERROR)):
        problem = case.find(tag)
        if problem is not None:
            return outcome, (problem.get("message") or "").strip()
    return RunOutcome.PASSED, ""


def _place(classname: str, name: str) -> tuple[str, str | None, str | None]:
    """(file, class, name) of a case; the last dotted part of ``classname`` is part of the module
    when it is named like a test module (pytest's ``test_*.py`` / ``*_test.py``), else a class (which
    may start in lower case: ``xLSTMModelTest``). A module that could not be imported is a case with
    no classname, named after the module."""
    if not classname:
        return name.replace(".", "/") + ".py", None, None
    parts = classname.split(".")
    if len(parts) > 1 and not (parts[-1].startswith("test_") or parts[-1].endswith("_test")):
        return "/".join(parts[:-1]) + ".py", parts[-1], name
    return "/".join(parts) + ".py", None, name


def read_junit(path: Path, root: ElementTree.Element) -> list[RunItem]:
    """The items of the junit XML document ``root`` read from ``path``."""
    items = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name")
        if name is None:
            raise ReportError(f"{path}: a <testcase> without a name (classname {classname!r})")
        outcome, reason = _outcome(case)
        file, test_class, test = _place(classname, name)
        items.append(RunItem(case.get("file") or file, test_class, test, outcome, reason))
    return items


def parse_xml(path: Path) -> ElementTree.Element:
    """The XML document of ``path``; a file that is not XML is a :class:`ReportError` naming the line."""
    try:
        return ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        line, column = error.position
        raise ReportError(f"{path}:{line}: not well-formed XML (column {column + 1})") from None
    except OSError as error:
        raise ReportError(f"{path}: cannot read it ({error.strerror})") from None
