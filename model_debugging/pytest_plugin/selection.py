"""``--observed_select FILE``: run only the tests a file lists, one ``file::Class::test`` a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_debugging.pytest_plugin.items import item_function


def read_selection(path: str) -> frozenset[str]:
    """The ``file::Class::test`` lines of ``path`` (blank lines and ``#`` comments aside)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise pytest.UsageError(f"--observed_select {path}: cannot read it ({error})") from None
    selected = set()
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if line and not line.startswith("#"):
            if line.count("::") != 2:
                raise pytest.UsageError(f"{path}:{number}: expected file::Class::test, got {line[:80]!r}")
            selected.add(line)
    return frozenset(selected)


def keep_selected(config: pytest.Config, items: list[pytest.Item], selection: frozenset[str]) -> None:
    """Deselect the items whose file, class and test (an expanded case's own test) are not listed."""
    kept, dropped = [], []
    for item in items:
        cls = getattr(item, "cls", None)
        name = getattr(item_function(item), "__name__", item.name)
        key = f"{item.nodeid.split('::', 1)[0]}::{cls.__name__ if cls else ''}::{name}"
        (kept if key in selection else dropped).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept
