"""Rows of the PR check that differ only in their model and test class, read as one line.

A skip added to a common test reaches every model inheriting it at once (on the 2026 snapshot of
transformers, ``@unittest.skip`` on ``ModelTesterMixin.test_attention_outputs`` gave 334 rows, of
which a table of ``max_rows`` showed 100). Such rows say one thing; one line per test, reason and
where says it once, and the models follow in a collapsed list under the table. One skip call often
words its reason per model ("LlamaForCausalLM does not support ..."): rows of one place (``where``)
are one line whatever their wording, which the list then gives per model.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from model_debugging.reporting.report import ItemsSection

# rows alike of this many models, or more, are one line; fewer stay rows of their own (read at a glance)
GROUP_FROM = 4
_MEMBERS = ("model", "test class")


def grouped(
    rows: pd.DataFrame, title: Callable[[pd.Series, int], str]
) -> tuple[pd.DataFrame, list[ItemsSection]]:
    """``rows`` with each set of rows of :data:`GROUP_FROM` or more models that agree on every column
    but ``model``, ``test class`` and (when they name a ``where``) ``reason`` made one line, where its
    first row was: its ``model`` cell says how many models, its ``test class`` cell the class they
    share or how many classes (a class collected by two files counted twice, as its rows are), its
    ``reason`` the first row's, said to be worded per model when theirs differ.

    Returns:
        `tuple`: the rows to show, and per line made of several rows a collapsed list of its models
        (each with its test classes, and its reason when they differ), titled ``title(line, number
        of models)``.
    """
    if rows.empty:
        return rows, []
    keys = [column for column in rows.columns if column not in (*_MEMBERS, "reason")]
    # rows without a place fold only when their reasons are the same
    reason_unless_placed = rows["reason"].where(rows["where"] == "", "")
    group_of = (
        rows.assign(_reason=reason_unless_placed)
        .groupby([*keys, "_reason"], sort=False, dropna=False)
        .ngroup()
    )
    models = rows.groupby(group_of)["model"].nunique()
    shown, lists, done = [], [], set()
    for index, row in rows.iterrows():
        group = group_of[index]
        if models[group] < GROUP_FROM:
            shown.append(row.to_dict())
            continue
        if group in done:
            continue
        done.add(group)
        members = rows[group_of == group]
        worded = members["reason"].nunique() > 1
        classes: dict[str, dict[str, None]] = {}
        reasons: dict[str, str] = {}
        for model, test_class, reason in zip(
            members["model"], members["test class"], members["reason"], strict=True
        ):
            classes.setdefault(model, {}).update({test_class: None} if test_class else {})
            reasons.setdefault(model, reason)
        line = {**row.to_dict(), "model": f"{len(classes)} models", "test class": _classes(members)}
        if worded:
            line["reason"] = f"{row['reason']} (worded per model: see the list)"
        shown.append(line)
        lists.append(
            ItemsSection(
                title(pd.Series(line), len(classes)),
                tuple(
                    (f"{model} ({', '.join(names)})" if names else model)
                    + (f": {reasons[model]}" if worded else "")
                    for model, names in classes.items()
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
