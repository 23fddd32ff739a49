"""Install what the skipped-test analyzer, the skip report and the PR check need, without torch.

CI jobs that only scan tests do not need the debugger's torch/safetensors (a multi-GB download).
Reads the dependencies from pyproject.toml, installs all but those, then this project in editable
mode (so utils/ scripts and configs/ resolve relative to the checkout).

    python utils/install_scanner_deps.py [--with_plot] [--dry_run]
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import tomllib

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEBUGGER_ONLY = {"torch", "safetensors"}


def pip_commands(root: Path = PROJECT_ROOT, *, with_plot: bool = False) -> list[list[str]]:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dependencies = project["dependencies"] + (project["optional-dependencies"]["plot"] if with_plot else [])
    wanted = [
        spec for spec in dependencies if re.split(r"[\s<>=!~\[;]", spec, maxsplit=1)[0] not in DEBUGGER_ONLY
    ]
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    return [[*pip, *wanted], [*pip, "--no-deps", "--editable", str(root)]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="utils/install_scanner_deps.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--with_plot", action="store_true", help="also install the plot extra (matplotlib)")
    parser.add_argument(
        "--dry_run", action="store_true", help="print the pip commands instead of running them"
    )
    args = parser.parse_args(argv)
    for command in pip_commands(with_plot=args.with_plot):
        print(" ".join(command), flush=True)
        if not args.dry_run:
            subprocess.run(command, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
