"""Questions a test asks of a library file's text, each answered as a fact.

A common test may read the source of a model's file (``inspect.getfile``, then ``read()``) and
look for a phrase in it or a pattern. Asked as :meth:`~model_debugging.skips.library.index.Library.fact`,
the evaluation depends on the answers, not on every character: an edit elsewhere in the file
changes no answer and evaluates nothing again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from model_debugging.skips.library.index import Library


@dataclass(frozen=True)
class TextMatch:
    """What ``re.search`` found in a file's text: the match and its groups (group 0 first)."""

    groups: tuple[str | None, ...]

    def group(self, *indices: int) -> str | None | tuple[str | None, ...]:
        """``Match.group`` by group numbers (raises IndexError for a group the pattern lacks)."""
        found = tuple(self.groups[index] for index in indices or (0,))
        return found[0] if len(found) == 1 else found


@dataclass(frozen=True)
class TextSearch:
    """The answer to ``re.search(pattern, <text>, flags)``: ``readable`` False when the file cannot be
    read; ``match`` None when the pattern is not found."""

    readable: bool
    match: TextMatch | None = None


def text_contains(library: Library, path: str, part: str) -> bool | None:
    """``part in <the text of path>``; None when the file cannot be read."""
    return library.fact(_contains, path, part)


def text_search(library: Library, path: str, pattern: str, flags: int) -> TextSearch:
    return library.fact(_search, path, pattern, flags)


def attention_interface_used(library: Library, path: str) -> bool | None:
    """Whether the attention modules of file ``path`` dispatch through the attention interface
    (True when it defines none), as ``PreTrainedModel._can_set_attn_implementation`` decides from
    the file's text; None when it cannot be read."""
    return library.fact(_attention_interface, path)


def _attention_interface(library: Library, path: str) -> bool | None:
    text = library.source(path)
    if text is None:
        return None
    if re.search(r"class \w+Attention\(nn.Module\)", text):
        return "eager_attention_forward" in text and "ALL_ATTENTION_FUNCTIONS.get_interface(" in text
    return True


def _contains(library: Library, path: str, part: str) -> bool | None:
    text = library.source(path)
    return None if text is None else part in text


def _search(library: Library, path: str, pattern: str, flags: int) -> TextSearch:
    text = library.source(path)
    if text is None:
        return TextSearch(False)
    found = re.search(pattern, text, flags)
    return TextSearch(True, TextMatch((found.group(0), *found.groups())) if found else None)
