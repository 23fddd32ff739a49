"""Install what the skipped-test analyzer, the skip report and the PR check need, without torch.

CI jobs that only scan tests do not need the debugger's torch/safetensors (a multi-GB download).
Reads the dependencies from pyproject.toml, installs all but those, then this project (a regular,
non-editable install: the package needs nothing from the checkout). Writes ``version=<project
version>`` to $GITHUB_OUTPUT, which the workflows put in the key of the analyzer's parse cache.

    python utils/install_scanner_deps.py [--with_plot] [--dry_run] [--github_output FILE]
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import tomllib

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEBUGGER_ONLY = {"torch", "safetensors"}


def _project(root: Path) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def pip_commands(root: Path = PROJECT_ROOT, *, with_plot: bool = False) -> list[list[str]]:
    project = _project(root)
    dependencies = project["dependencies"] + (project["optional-dependencies"]["plot"] if with_plot else [])
    wanted = [
        spec for spec in dependencies if re.split(r"[\s<>=!~\[;]", spec, maxsplit=1)[0] not in DEBUGGER_ONLY
    ]
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    return [[*pip, *wanted], [*pip, "--no-deps", str(root)]]


def main(argv=None) -> int:
    # plain argparse: this runs before the project (and its command-line helpers) is installed
    parser = argparse.ArgumentParser(
        prog="utils/install_scanner_deps.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--with_plot", action="store_true", help="also install the plot extra (matplotlib)")
    parser.add_argument(
        "--dry_run", action="store_true", help="print the pip commands instead of running them"
    )
    parser.add_argument(
        "--github_output", default=os.environ.get("GITHUB_OUTPUT"), help="default: $GITHUB_OUTPUT"
    )
    args = parser.parse_args(argv)
    for command in pip_commands(with_plot=args.with_plot):
        print(" ".join(command), flush=True)
        if not args.dry_run:
            subprocess.run(command, check=True)
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as output:
            output.write(f"version={_project(PROJECT_ROOT)['version']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
