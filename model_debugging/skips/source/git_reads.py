"""Running git on a checkout to read it only.

With optional locks off, ``git status`` and ``git diff`` do not refresh the index's stat cache (a
write), so neither a scan nor the PR check changes the user's checkout.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

READ_ONLY_ENV = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}


def run_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``git -C repo args`` with its output captured as text (OSError when git is missing)."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=READ_ONLY_ENV)
