"""Read pytest's short test summary (``-rA``), as transformers' ``--make-reports`` keeps it.

``summary_short.txt`` starts with the ``short test summary info`` rule, then one line per item:
``PASSED <node id>``, ``FAILED <node id> - <message>``, ``ERROR ...``, ``XFAIL ...``, ``XPASS ...``,
and skips either folded by location (pytest's default: ``SKIPPED [3] tests/x.py:120: <reason>``,
the line of the skipped test's definition, or no line for a skip mark) or one per item
(``--no-fold-skipped``: ``SKIPPED <node id> - <reason>``). A message may go on over more lines.
``stats.txt`` beside it holds the closing counts, which the lines must add up to.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from model_debugging.skips.observed.records import ReportError, RunItem, RunOutcome

HEADER = re.compile(r"=+ short test summary info =+")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_WORDS = {
    "PASSED": RunOutcome.PASSED,
    "FAILED": RunOutcome.FAILED,
    "ERROR": RunOutcome.ERROR,
    "SKIPPED": RunOutcome.SKIPPED,
    "XFAIL": RunOutcome.XFAILED,
    "XPASS": RunOutcome.XPASSED,
}
_LINE = re.compile(rf"({'|'.join(_WORDS)}) (.*)")
_FOLDED = re.compile(r"\[(\d+)\] (\S+?)(?::(\d+))?: (.*)")
_STAT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


def split_node_id(node_id: str) -> tuple[str, str | None, str | None]:
    """``tests/x.py::Class::test_y[p]`` -> ``("tests/x.py", "Class", "test_y[p]")``; a node id
    naming only a file (a collection error) has neither class nor name."""
    parts = node_id.split("::")
    if len(parts) == 1:
        return parts[0], None, None
    return parts[0], parts[-2] if len(parts) > 2 else None, parts[-1]


def read_line(text: str, model: str | None = None) -> RunItem | None:
    """The item of one summary line (``PASSED tests/...``), or None when it is not one."""
    match = _LINE.fullmatch(text)
    if match is None:
        return None
    outcome, rest = _WORDS[match.group(1)], match.group(2)
    folded = _FOLDED.fullmatch(rest) if outcome is RunOutcome.SKIPPED else None
    if folded is not None:
        count, path, line, reason = folded.groups()
        return RunItem(
            path, None, None, outcome, reason, int(line) if line else None, int(count), model=model
        )
    node_id, _, message = rest.partition(" - ")
    path, test_class, name = split_node_id(node_id.strip())
    return RunItem(path, test_class, name, outcome, message.strip(), model=model)


def read_summary(path: Path, model: str | None = None) -> tuple[list[RunItem], list[str]]:
    """The items of ``summary_short.txt`` at ``path`` and the warnings its ``stats.txt`` gives.

    Raises:
        ReportError: the file is not a short test summary (naming the line that is not).
    """
    try:
        lines = _ANSI.sub("", path.read_text(encoding="utf-8")).splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ReportError(f"{path}: cannot read it ({error})") from None
    items: list[RunItem] = []
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if numbered and not HEADER.fullmatch(numbered[0][1].strip()):
        number = numbered[0][0]
        raise ReportError(
            f"{path}:{number}: not a pytest short test summary (no 'short test summary info' rule)"
        )
    for number, line in numbered[1:]:
        item = read_line(line, model)
        if item is not None:
            items.append(item)
        elif items and items[-1].outcome is not RunOutcome.PASSED:  # a message over several lines
            items[-1] = replace(items[-1], reason=f"{items[-1].reason}\n{line}")
        else:
            raise ReportError(f"{path}:{number}: not a line of pytest's short test summary: {line[:80]!r}")
    return items, _stats_warnings(path.with_name("stats.txt"), items)


def _stats_warnings(path: Path, items: list[RunItem]) -> list[str]:
    """Where the summary's lines do not add up to the counts of ``stats.txt`` (a cut-off file)."""
    try:
        text = _ANSI.sub("", path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    expected: dict[str, int] = {}
    for count, word in _STAT.findall(text):
        word = "error" if word.startswith("error") else word
        expected[word] = expected.get(word, 0) + int(count)
    found: dict[str, int] = {}
    for item in items:
        found[item.outcome.value] = found.get(item.outcome.value, 0) + item.count
    return [
        f"{path}: says {count} {word}, the summary lists {found.get(word, 0)}"
        for word, count in sorted(expected.items())
        if found.get(word, 0) != count
    ]
