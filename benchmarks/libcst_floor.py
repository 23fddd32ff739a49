"""The parse a scan cannot do without: libcst on every model test file, as the scan gives it the
text (the code it never reads left out first, see ``skips/parse/elide.py``), and nothing else.

    python benchmarks/libcst_floor.py REPO

The project reads test files with libcst, so no cold scan can cost less than this: ``bench_scanner.py``
runs it beside the regex scanner to show how near a cold scan can come to its targets.
"""

from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from model_debugging.skips.parse.elide import elide_unread_code  # noqa: E402


def main(repo: Path) -> int:
    paths = sorted((repo / "tests" / "models").rglob("test_modeling_*.py"))
    for path in paths:
        cst.parse_module(elide_unread_code(path.read_text(encoding="utf-8")).text)
    print(f"{len(paths)} files parsed")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
