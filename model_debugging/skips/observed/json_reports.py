"""Read the JSON reports: our pytest plugin's record, and the CI's collated reports.

transformers' CI collates each machine's per-model ``--make-reports`` folders into
``collated_reports_<machine type>_<commit>.json`` (``utils/collated_reports.py``)::

    {"gpu_name": "h100", "machine_type": "single-gpu", "commit_hash": "2da00a3",
     "results": [{"model": "bert", "results": [{"status": "skipped", "count": 3,
                  "test": "[3] tests/test_modeling_common.py:1120: <reason>"}, ...]}, ...]}

where ``test`` is the rest of the model's ``summary_short.txt`` line after its status word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from model_debugging.run_record import FORMAT
from model_debugging.skips.observed.records import Report, ReportError, RunItem, RunOutcome
from model_debugging.skips.observed.short_summary import read_line, split_node_id

_COLLATED_KEYS = ("machine_type", "results")


def load_json(path: Path) -> Any:
    """The JSON document of ``path``; one that is not JSON is a :class:`ReportError` naming the line."""
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ReportError(f"{path}: cannot read it ({error})") from None


def is_plugin_record(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def is_collated(document: Any) -> bool:
    return isinstance(document, dict) and all(key in document for key in _COLLATED_KEYS)


def _field(entry: Any, key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(entry, dict) or key not in entry:
        raise ReportError(f"{where}: missing {key!r}")
    value = entry[key]
    if not isinstance(value, kinds):
        raise ReportError(f"{where}.{key}: unexpected value {str(value)[:60]!r}")
    return value


def read_plugin_record(path: Path, document: dict) -> Report:
    items = []
    for index, entry in enumerate(_field(document, "items", list, str(path))):
        where = f"{path}: items[{index}]"
        node_id = _field(entry, "nodeid", str, where)
        try:
            outcome = RunOutcome(_field(entry, "outcome", str, where))
        except ValueError:
            raise ReportError(f"{where}.outcome: unknown outcome {entry['outcome']!r}") from None
        file, test_class, name = split_node_id(node_id)
        assertions = entry.get("assertions")
        items.append(
            RunItem(
                file,
                test_class,
                name,
                outcome,
                str(entry.get("reason") or ""),
                base=entry.get("test") if isinstance(entry.get("test"), str) else None,
                assertions=assertions if isinstance(assertions, int) else None,
                checks=entry.get("checks") if isinstance(entry.get("checks"), bool) else None,
            )
        )
    return Report(
        str(path),
        "plugin",
        str(path),
        tuple(items),
        ignores_skips=bool(document.get("ignores_skip_decorators")),
        counts_assertions=bool(document.get("counts_assert_statements")),
    )


def read_collated(path: Path, document: dict) -> Report:
    items = []
    machine = " ".join(str(document.get(key) or "") for key in ("machine_type", "gpu_name")).strip()
    for index, section in enumerate(_field(document, "results", list, str(path))):
        where = f"{path}: results[{index}]"
        model = _field(section, "model", str, where)
        for number, result in enumerate(_field(section, "results", list, where)):
            at = f"{where}.results[{number}]"
            status, text = _field(result, "status", str, at), _field(result, "test", str, at)
            item = read_line(f"{status.upper()} {text}", model)
            if item is None:
                raise ReportError(f"{at}.status: unknown status {status!r}")
            items.append(item)
    commit = document.get("commit_hash")
    return Report(
        str(path),
        "collated",
        machine or str(path),
        tuple(items),
        commit=commit if isinstance(commit, str) else None,
    )
