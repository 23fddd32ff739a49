"""The HTML page: the package's template, style and script with the view data inlined."""

from __future__ import annotations

import html
import json
import re
from importlib import resources

_SCRIPTS = ("format.js", "detail.js", "tree.js", "explorer.js")
_PLACEHOLDER_RE = re.compile(r"\{\{(TITLE|STYLE|SCRIPT|DATA|VALUES)\}\}")
# Inside <script>, the HTML parser ends the block at "</script" and treats "<!--" specially; JSON
# keeps its meaning with these characters escaped, and U+2028/U+2029 are escaped for old parsers.
_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _asset(name: str) -> str:
    return resources.files("model_debugging.explorer").joinpath("assets", name).read_text(encoding="utf-8")


def embedded_json(document: dict | list) -> str:
    """``document`` as JSON that can sit inside a ``<script>`` element whatever strings it holds."""
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).translate(
        _SCRIPT_SAFE
    )


def _script() -> str:
    """The scripts, in dependency order, as one strict-mode function scope (they share helpers)."""
    script = "\n".join(_asset(name) for name in _SCRIPTS)
    if "</script" in script.lower():  # would end the inline script early
        raise ValueError("the explorer's scripts must not contain '</script'")
    return f'(function () {{\n"use strict";\n{script}}})();\n'


def render_page(document: dict) -> str:
    """The self-contained page for the view ``document`` (see :func:`.view.view_document`)."""
    parts = {
        "TITLE": html.escape(document["title"]),
        "STYLE": _asset("explorer.css"),
        "SCRIPT": _script(),
        # the printed values go in a block of their own after the script: the tree is painted while
        # the parser still reads them, and they are parsed when a detail pane first needs them
        "DATA": embedded_json({key: value for key, value in document.items() if key != "values"}),
        "VALUES": embedded_json(document["values"]),
    }
    # one pass, so a placeholder-like string inside the data is never replaced
    return _PLACEHOLDER_RE.sub(lambda match: parts[match.group(1)], _asset("page.html"))
