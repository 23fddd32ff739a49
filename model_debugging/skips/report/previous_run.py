"""Download the scan result of a workflow's last successful scheduled run with the GitHub CLI (``gh``).

Needs only ``actions: read`` on the repository (``GH_TOKEN`` set to the job's token), and no
third-party action.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from model_debugging.skips.results.output_files import RESULT_FILE


class GitHubCLIError(RuntimeError):
    """``gh`` could not list the workflow's runs (missing CLI, token or permission)."""


def _gh(gh: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([gh, *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise GitHubCLIError(f"the GitHub CLI {gh!r} is not installed") from None


def last_successful_run(repo: str, workflow: str, *, gh: str = "gh") -> int | None:
    """The id of the newest successful scheduled run of ``workflow`` in ``repo``, or None when there is none.

    Only a scheduled run is last week's: a manual run may have scanned another revision (the
    workflow's ``transformers_ref`` input), and a trend against it would count the distance
    between the two revisions as this week's changes.
    """
    args = ["run", "list", "--repo", repo, "--workflow", workflow, "--event", "schedule"]
    args += ["--status", "success", "--limit", "1"]
    result = _gh(gh, *args, "--json", "databaseId")
    if result.returncode != 0:
        raise GitHubCLIError(f"gh {' '.join(args)} failed: {result.stderr.strip()}")
    runs = json.loads(result.stdout or "[]")
    return int(runs[0]["databaseId"]) if runs else None


def fetch_previous_result(
    repo: str, workflow: str, artifact: str, output_dir: str | os.PathLike, *, gh: str = "gh"
) -> tuple[Path | None, str]:
    """Download ``artifact`` of the last successful scheduled run into ``output_dir``.

    Returns:
        `tuple`: the path of the previous scan result (None when there is none) and a sentence saying why.
    """
    run_id = last_successful_run(repo, workflow, gh=gh)
    if run_id is None:
        return None, f"no successful scheduled run of {workflow} in {repo} yet"
    result = _gh(
        gh, "run", "download", str(run_id), "--repo", repo, "--name", artifact, "--dir", str(output_dir)
    )
    if result.returncode != 0:
        return None, f"run {run_id} has no artifact {artifact!r} (expired?): {result.stderr.strip()}"
    path = Path(output_dir) / RESULT_FILE
    if not path.is_file():
        return None, f"artifact {artifact!r} of run {run_id} holds no {RESULT_FILE}"
    return path, f"previous result from run {run_id}"
