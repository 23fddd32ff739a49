"""Rows of the PR check that differ only in their model and test class, read as one line.

A skip added to a common test reaches every model inheriting it at once (on the 2026 snapshot of
transformers, ``@unittest.skip`` on ``ModelTesterMixin.test_attention_outputs`` gave 334 rows, of
which a table of ``max_rows`` showed 100). Such rows say one thing; one line per test, reason and
where says it once, and the models follow in a collapsed list under the table.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from model_debugging.reporting.report import ItemsSection

# this many rows alike, or more, are one line; fewer stay rows of their own (read at a glance)
GROUP_FROM = 4
_MEMBERS = ("model", "test class")


def grouped(
    rows: pd.DataFrame, title: Callable[[pd.Series, int], str]
) -> tuple[pd.DataFrame, list[ItemsSection]]:
    """``rows`` with each set of :data:`GROUP_FROM` or more rows that agree on every column but
    ``model`` and ``test class`` made one line, where its first row was: its ``model`` cell says
    how many models, its ``test class`` cell the class they share or how many classes (a class
    collected by two files counted twice, as its rows are).

    Returns:
        `tuple`: the rows to show, and per line made of several rows a collapsed list of its models
        (each with its test classes), titled ``title(first row, number of models)``.
    """
    if rows.empty:
        return rows, []
    keys = [column for column in rows.columns if column not in _MEMBERS]
    group_of = rows.groupby(keys, sort=False, dropna=False).ngroup()
    sizes = group_of.value_counts()
    shown, lists, done = [], [], set()
    for index, row in rows.iterrows():
        group = group_of[index]
        if sizes[group] < GROUP_FROM:
            shown.append(row.to_dict())
            continue
        if group in done:
            continue
        done.add(group)
        members = rows[group_of == group]
        classes: dict[str, dict[str, None]] = {}
        for model, test_class in zip(members["model"], members["test class"], strict=True):
            classes.setdefault(model, {}).update({test_class: None} if test_class else {})
        shown.append({**row.to_dict(), "model": f"{len(classes)} models", "test class": _classes(members)})
        lists.append(
            ItemsSection(
                title(row, len(classes)),
                tuple(
                    f"{model} ({', '.join(names)})" if names else model for model, names in classes.items()
                ),
                style="collapsed",
            )
        )
    return pd.DataFrame(shown, columns=rows.columns), lists


def _classes(members: pd.DataFrame) -> str:
    """The class the rows share, else how many rows name one: a row per class and file collecting
    it, so as many as the skips the summary counts."""
    named = members["test class"][members["test class"] != ""]
    if named.nunique() == 1:
        return named.iloc[0]
    return f"{len(named)} classes" if len(named) else ""
