"""A report is a title, summary lines and titled sections; render it as terminal text or markdown.

A section is a table (:class:`Section`) or a titled list of items (:class:`ItemsSection`: paths,
the lines of a code block, or names folded into a collapsed block). Every tool's human-readable output is built as a :class:`Report`.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from model_debugging.reporting.tables import render_markdown_table, render_terminal_table


@dataclass(frozen=True)
class Section:
    """One titled table; only the first ``limit`` rows are shown, ``empty`` replaces a table without rows.
    Its heading counts the rows, followed by ``unit`` ("row") when a row is not the thing its title
    names (a table whose rows fold several skips)."""

    title: str
    rows: pd.DataFrame
    limit: int
    empty: str = "None."
    unit: str = ""

    @property
    def heading(self) -> str:
        count = len(self.rows)
        unit = f" {self.unit}{'' if count == 1 else 's'}" if self.unit else ""
        return f"{self.title} ({count}{unit})"


@dataclass(frozen=True)
class ItemsSection:
    """A titled list: ``"list"`` items are names (bulleted in markdown), ``"code"`` items are the lines
    of a code block in ``language`` (fenced in markdown), ``"collapsed"`` items are names run together
    in one paragraph (in markdown a ``<details>`` block, folded under its title: a list of hundreds of
    models that a reader opens when needed). Sections without items are left out."""

    title: str
    items: tuple[str, ...]
    style: Literal["list", "code", "collapsed"] = "list"
    language: str = ""


@dataclass(frozen=True)
class Report:
    title: str
    summary: list[str] = field(default_factory=list)
    sections: list[Section | ItemsSection] = field(default_factory=list)


def _hidden_note(section: Section) -> str | None:
    hidden = len(section.rows) - section.limit
    return f"… and {hidden} more (showing {section.limit} of {len(section.rows)})" if hidden > 0 else None


def render_text(report: Report) -> str:
    """Plain text for a terminal: underlined headings and aligned tables."""
    lines = [report.title, "=" * len(report.title), *report.summary]
    for section in report.sections:
        if isinstance(section, ItemsSection):
            if section.items:
                lines += ["", section.title, "-" * len(section.title), *_text_items(section)]
            continue
        lines += ["", section.heading, "-" * len(section.heading)]
        if section.rows.empty:
            lines.append(section.empty)
            continue
        if section.limit > 0:
            lines.append(render_terminal_table(section.rows.head(section.limit)))
        if note := _hidden_note(section):
            lines.append(note)
    return "\n".join(lines) + "\n"


def render_markdown(report: Report) -> str:
    """GitHub-flavoured markdown: one ``###`` heading and table per section."""
    lines = [f"## {report.title}", ""]
    if report.summary:
        lines += [*report.summary, ""]
    for section in report.sections:
        if isinstance(section, ItemsSection):
            lines += _markdown_items(section)
            continue
        lines += [f"### {section.heading}", ""]
        if section.rows.empty:
            lines += [section.empty, ""]
            continue
        if section.limit > 0:
            lines += [render_markdown_table(section.rows.head(section.limit)), ""]
        if note := _hidden_note(section):
            lines += [f"_{note}_", ""]
    return "\n".join(lines)


def _text_items(section: ItemsSection) -> list[str]:
    if section.style == "collapsed":
        return textwrap.wrap(", ".join(section.items), width=100, break_on_hyphens=False)
    return list(section.items)


def _markdown_items(section: ItemsSection) -> list[str]:
    if not section.items:
        return []
    if section.style == "collapsed":
        summary, names = html.escape(section.title), html.escape(", ".join(section.items))
        return [f"<details><summary>{summary}</summary>", "", names, "", "</details>", ""]
    if section.style == "code":
        return [f"### {section.title}", "", f"```{section.language}", *section.items, "```", ""]
    return [f"### {section.title}", "", *(f"- `{item}`" for item in section.items), ""]
