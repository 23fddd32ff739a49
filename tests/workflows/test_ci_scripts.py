"""The scripts the workflows call that are not tested elsewhere: utils/scan_cache_key.py, and
utils/fetch_previous_scan.py and utils/post_pr_comment.py (against a fake `gh` on PATH)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]

# a stand-in for the GitHub CLI: logs its arguments, answers `run list` from $FAKE_RUNS (newest
# first; an `event` key is filtered by --event as gh does) and `run download` by writing
# $FAKE_RESULT into --dir (or failing when it is unset)
FAKE_GH = textwrap.dedent(
    f"""\
    #!{sys.executable}
    import json, os, pathlib, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(json.dumps(args) + "\\n")
    if args[:2] == ["run", "list"]:
        if os.environ.get("FAKE_LIST_FAILS"):
            sys.exit("HTTP 403: Resource not accessible by integration")
        runs = json.loads(os.environ["FAKE_RUNS"])
        if "--event" in args:
            event = args[args.index("--event") + 1]
            runs = [run for run in runs if run.get("event", event) == event]
        limit = int(args[args.index("--limit") + 1])
        print(json.dumps([dict(databaseId=run["databaseId"]) for run in runs[:limit]]))
    elif args[:2] == ["run", "download"]:
        if "FAKE_RESULT" not in os.environ:
            sys.exit("no valid artifacts found to download")
        target = pathlib.Path(args[args.index("--dir") + 1])
        target.mkdir(parents=True, exist_ok=True)
        (target / "all_tests_scan_result.json").write_text(os.environ["FAKE_RESULT"])
    """
)


def fetch(tmp_path, *options: str, **fake_env) -> tuple[subprocess.CompletedProcess, str, list]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    output, log = tmp_path / "github_output", tmp_path / "gh.log"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_LOG=str(log), **fake_env)
    command = [
        sys.executable,
        str(ROOT / "utils" / "fetch_previous_scan.py"),
        *("--repo", "me/model-debugging", "--workflow", "skip-report.yml", "--artifact", "skip-scan-result"),
        *("--output_dir", str(tmp_path / "previous"), "--github_output", str(output)),
        *options,
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return result, output.read_text() if output.exists() else "", calls


def test_fetch_downloads_the_last_successful_run(tmp_path):
    result, output, calls = fetch(tmp_path, FAKE_RUNS='[{"databaseId": 42}]', FAKE_RESULT="{}")
    assert result.returncode == 0, result.stderr
    path = tmp_path / "previous" / "all_tests_scan_result.json"
    assert output == f"found=true\npath={path}\n"
    assert calls[0][:2] == ["run", "list"] and "--status" in calls[0] and "success" in calls[0]
    assert calls[1][:3] == ["run", "download", "42"] and "skip-scan-result" in calls[1]


def test_a_manual_run_of_another_revision_is_not_last_week(tmp_path):
    # Monday's scheduled run, then a manual run scanning an old tag (the transformers_ref input)
    runs = '[{"databaseId": 43, "event": "workflow_dispatch"}, {"databaseId": 42, "event": "schedule"}]'
    result, output, calls = fetch(tmp_path, FAKE_RUNS=runs, FAKE_RESULT="{}")
    assert result.returncode == 0, result.stderr
    assert calls[1][:3] == ["run", "download", "42"]
    assert result.stdout == "previous result from run 42\n"


def test_fetch_without_previous_run_or_artifact_is_not_an_error(tmp_path):
    result, output, calls = fetch(tmp_path, FAKE_RUNS="[]")
    assert (result.returncode, output, len(calls)) == (0, "found=false\npath=\n", 1)
    assert "no successful scheduled run" in result.stdout
    result, output, _ = fetch(tmp_path, FAKE_RUNS='[{"databaseId": 7}]')
    assert (result.returncode, output.splitlines()[-2]) == (0, "found=false")
    assert "run 7 has no artifact 'skip-scan-result'" in result.stdout


def made_by(digit: str, commit: str | None) -> str:
    """A one-test scan result made by the analyzer ``digit`` (repeated in its digests) of ``commit``."""
    provenance = {
        "package_version": "0.1.0",
        "analyzer_digest": digit * 64,
        "settings_digest": "5" * 64,
        "commit": commit,
    }
    entry = {"origin": "common", "models_ran": [], "models_skipped": [], "skipped_proportion": 0.0}
    return json.dumps({"test_forward": {**entry, "reasons_skipped": [], "provenance": provenance}})


def test_fetch_names_the_previous_commit_to_rescan_when_the_analyzer_changed_since(tmp_path):
    current = tmp_path / "current.json"
    current.write_text(made_by("b", "2" * 40))
    runs, options = '[{"databaseId": 42}]', ("--current", str(current))
    result, output, _ = fetch(tmp_path, *options, FAKE_RUNS=runs, FAKE_RESULT=made_by("a", "1" * 40))
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[-1] == f"rescan_commit={'1' * 40}"
    assert (
        f"rescan: the analyzer changed since the previous result: scan its commit {'1' * 40}" in result.stdout
    )
    for previous in (made_by("b", "1" * 40), made_by("a", None)):  # same analyzer; no commit recorded
        result, output, _ = fetch(tmp_path, *options, FAKE_RUNS=runs, FAKE_RESULT=previous)
        assert (result.returncode, output.splitlines()[-1]) == (0, "rescan_commit=")
    result, output, _ = fetch(tmp_path, *options, FAKE_RUNS="[]")
    assert (result.returncode, output.splitlines()[-3:]) == (0, ["found=false", "path=", "rescan_commit="])


def test_fetch_reports_a_failing_gh(tmp_path):
    result, output, _ = fetch(tmp_path, FAKE_RUNS="[]", FAKE_LIST_FAILS="1")
    assert result.returncode == 2 and output == ""
    assert "HTTP 403" in result.stderr


# a stand-in for `gh api`: lists the ids in $FAKE_COMMENT_IDS, logs what each edit would send
FAKE_GH_API = textwrap.dedent(
    f"""\
    #!{sys.executable}
    import json, os, sys
    args = sys.argv[1:]
    sent = json.load(open(args[args.index("--input") + 1])) if "--input" in args else None
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(json.dumps([args, sent]) + "\\n")
    if os.environ.get("FAKE_API_FAILS"):
        sys.exit("HTTP 403: Resource not accessible by integration")
    if "--jq" in args:
        print(os.environ.get("FAKE_COMMENT_IDS", ""))
    """
)


def post(workdir, body: str | None = "## New skipped tests\n", **fake_env):
    """Run utils/post_pr_comment.py in ``workdir`` against the fake gh: its result and gh's calls."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "gh").write_text(FAKE_GH_API)
    (bin_dir / "gh").chmod(0o755)
    log, markdown = workdir / "gh.log", workdir / "new_skips.md"
    if body is not None:
        markdown.write_text(body, encoding="utf-8")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_LOG=str(log), **fake_env)
    command = [
        sys.executable,
        str(ROOT / "utils" / "post_pr_comment.py"),
        *("--repo", "me/transformers", "--pr", "12", "--body", str(markdown)),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return result, calls


def test_the_first_run_creates_the_comment_and_later_runs_edit_it(tmp_path):
    result, calls = post(tmp_path / "first")
    assert result.returncode == 0, result.stderr
    (listing, _), (create, sent) = calls
    assert listing[:3] == ["api", "--paginate", "repos/me/transformers/issues/12/comments"]
    assert create[:4] == ["api", "--method", "POST", "repos/me/transformers/issues/12/comments"]
    assert sent["body"] == "<!-- model-debugging check-skips -->\n## New skipped tests\n"
    result, calls = post(tmp_path / "again", FAKE_COMMENT_IDS="77\n")
    assert result.returncode == 0 and "updated comment 77 on me/transformers#12" in result.stdout
    assert calls[1][0][:4] == ["api", "--method", "PATCH", "repos/me/transformers/issues/comments/77"]


def test_a_report_longer_than_a_comment_is_cut_at_a_row_with_a_note(tmp_path):
    rows = [f"| model_{i} | test_x | skip reason {'r' * 80} |" for i in range(1500)]
    report = "## New skipped tests\n\n| model | test | reason |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    assert len(report) > 65536  # GitHub answers HTTP 422 to a comment body this long
    result, calls = post(tmp_path, body=report)
    assert result.returncode == 0, result.stderr
    sent = calls[1][1]["body"]
    assert len(sent) <= 65536
    kept, note = sent.split("\n\n… ")
    assert kept.splitlines()[-1] in rows  # cut after a whole row
    assert note.startswith("The report was cut here") and "summary of the check's job" in note


def test_a_comment_that_cannot_be_posted_is_a_warning_and_a_missing_body_an_error(tmp_path):
    result, _ = post(tmp_path / "fork", FAKE_API_FAILS="1")
    assert result.returncode == 0 and "::warning::" in result.stdout and "HTTP 403" in result.stdout
    result, calls = post(tmp_path / "no body", body=None)
    assert result.returncode == 2 and "cannot read --body" in result.stderr and calls == []


def test_the_cache_key_follows_every_file_a_scan_reads_and_nothing_else(tmp_path):
    repo = tmp_path / "transformers"
    for relative in (
        "tests/test_modeling_common.py",
        "src/transformers/modeling_utils.py",
        "utils/check_repo.py",
    ):
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text("x = 1\n")
    output = tmp_path / "github_output"

    def key() -> str:
        command = [sys.executable, str(ROOT / "utils" / "scan_cache_key.py"), "--repo", str(repo)]
        subprocess.run([*command, "--github_output", str(output)], capture_output=True, text=True, check=True)
        return output.read_text().splitlines()[-1]

    first = key()
    (repo / "utils/check_repo.py").write_text("x = 2\n")  # the analyzer never reads utils/
    assert key() == first
    (repo / "src/transformers/modeling_utils.py").write_text("x = 2\n")
    changed = key()
    assert changed != first and changed.startswith("key=")


def test_the_cache_key_step_gives_the_installed_version_for_the_key_prefix(tmp_path):
    (tmp_path / "tests").mkdir()
    output = tmp_path / "github_output"
    command = [sys.executable, str(ROOT / "utils" / "scan_cache_key.py"), "--repo", str(tmp_path)]
    result = subprocess.run([*command, "--github_output", str(output)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert output.read_text().splitlines()[0] == f"version={version}"
    assert result.stdout == output.read_text()
