"""The GitHub workflows and action.yml: schema-valid, actionlint-clean, least privilege, tested scripts only."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
BIN = Path(sys.executable).parent
BROKEN_WORKFLOW = "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n        uses: x\n"


def tool(name: str) -> str:
    path = BIN / name if (BIN / name).exists() else shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: install the test extra (pip install -e '.[test]')")
    return str(path)


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def steps_of(path: Path) -> list[dict]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "runs" in document:
        return document["runs"]["steps"]
    return [step for job in document["jobs"].values() for step in job["steps"]]


def test_there_are_workflows():
    assert {path.name for path in WORKFLOWS} >= {"ci.yml", "skip-report.yml"}


def test_workflows_match_the_github_schema():
    result = run(
        tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_matches_the_github_schema():
    result = run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ACTION))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_is_clean():
    result = run(tool("actionlint"), "-no-color", *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_validators_reject_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN_WORKFLOW, encoding="utf-8")
    assert (
        run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(broken)).returncode
        != 0
    )
    assert run(tool("actionlint"), "-no-color", str(broken)).returncode != 0


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_least_privilege(path):
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    triggers = document[True]  # YAML 1.1 reads the key `on` as True
    assert "pull_request_target" not in triggers
    assert "permissions" in document, "set top-level permissions explicitly"
    granted = [document["permissions"] or {}] + [
        job.get("permissions") or {} for job in document["jobs"].values()
    ]
    writes = [scope for grant in granted for scope, level in grant.items() if level != "read"]
    assert writes == []


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION], ids=lambda path: path.name)
def test_actions_are_pinned_to_commits(path):
    for step in steps_of(path):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


# `pip install` of this project alone, from its checkout: the base install, or with the plot extra
INSTALL = re.compile(
    r'python -m pip install --disable-pip-version-check "(\$GITHUB_ACTION_PATH|\./project(\[plot\])?)"'
)


@pytest.mark.parametrize(
    "path", [ROOT / ".github" / "workflows" / "skip-report.yml", ACTION], ids=lambda path: path.name
)
def test_the_analyzer_jobs_install_this_project_without_the_debugger_extra(path):
    installs = [step["run"] for step in steps_of(path) if "pip install" in step.get("run", "")]
    assert len(installs) == 1 and INSTALL.fullmatch(installs[0].strip()), installs


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION], ids=lambda path: path.name)
def test_every_run_step_calls_a_tested_script_of_this_project(path):
    tests_text = "\n".join(test.read_text(encoding="utf-8") for test in (ROOT / "tests").rglob("test_*.py"))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for step in steps_of(path):
        if "run" not in step:
            continue
        command = step["run"]
        if INSTALL.fullmatch(command.strip()):
            continue
        if make := re.fullmatch(r"make (\w+)", command.strip()):
            assert re.search(rf"^{make.group(1)}:", makefile, re.MULTILINE), command
            continue
        script = re.search(r"utils/(\w+\.py)", command)
        assert script, f"{path.name}: step {step.get('name')!r} does not call a script of this project"
        assert (ROOT / "utils" / script.group(1)).is_file(), command
        assert script.group(1) in tests_text, f"no test mentions utils/{script.group(1)}"
