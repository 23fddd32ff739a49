"""A regular install in a fresh venv: the base install runs the analyzer without torch, and the
``debugger`` extra adds the debugger, compare and view.

The project is built once into a wheel (``pip wheel --no-build-isolation``) and installed with
``pip install --no-index``, so pip resolves the declared dependencies for real but can take them
only from what is already installed: the fresh venv sees, through a ``.pth`` line, a folder of
links to exactly the distributions the base requirements pull in (their closure, read from the
metadata of this environment), and later a second folder with what the extra pulls in. A missing
or wrong requirement fails the install, no download happens (no network needed, no torch build
other than the installed one can be picked), and it takes seconds. Commands run from a temporary
directory with a bare PATH, so nothing comes from this checkout.
"""

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from tests.skips.conftest import write_tree
from tests.support.observed_tree import observed_tree_files
from tests.support.pytest_runs import run_pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mini_transformers"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRA = "debugger"
TRACE = """
import sys, torch
from model_debugging import model_addition_debugger_context

class Toy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x).relu()

torch.manual_seed(0)
model = Toy()
for debug_path in sys.argv[1:]:
    with model_addition_debugger_context(model, debug_path=debug_path):
        model(torch.ones(2, 4))
print(torch.__version__)
"""


def closure(requirements: list[str], skip: set[str] = frozenset()) -> set[str]:
    """The installed distributions ``requirements`` pull in, recursively (markers evaluated here)."""
    found: set[str] = set()
    pending = [(Requirement(text), "") for text in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = importlib.metadata.distribution(requirement.name).metadata["Name"].lower()
        if name in skip or (name in found and not requirement.extras):
            continue
        found.add(name)
        for text in importlib.metadata.requires(name) or ():
            for wanted in requirement.extras or {""}:
                pending.append((Requirement(text), wanted))
    return found


def link_distributions(names: set[str], folder: Path) -> None:
    """Make ``folder`` a site folder holding only ``names``: links to their top-level files."""
    folder.mkdir()
    for name in names:
        distribution = importlib.metadata.distribution(name)
        site = Path(distribution.locate_file(""))
        for top in {Path(file).parts[0] for file in distribution.files if not str(file).startswith("..")}:
            if not (folder / top).exists():
                (folder / top).symlink_to(site / top)


def see(venv_dir: Path, folder: Path) -> None:
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv_dir), "platbase": str(venv_dir)}))
    (site / f"{folder.name}.pth").write_text(f"{folder}\n")


class Venv:
    def __init__(self, directory: Path, work: Path):
        self.bin = directory / "bin"
        self.work = work

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        cwd = cwd or self.work
        env = {
            "PATH": f"{self.bin}{os.pathsep}/usr/bin:/bin",
            "HOME": str(cwd),
            "XDG_CACHE_HOME": str(cwd / "cache"),
        }
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, env=env
        )

    def pip_install(self, *args: str) -> subprocess.CompletedProcess:
        pip = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(self.bin / "python"),
            "--disable-pip-version-check",
        ]
        return subprocess.run([*pip, "install", "--no-index", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of this project, built from a copy of what a source distribution holds."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(
        ROOT / "model_debugging", source / "model_debugging", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "--wheel-dir", str(work), str(source)], check=True, capture_output=True)
    return next(work.glob("model_debugging-*.whl"))


@pytest.fixture(scope="module")
def requirement_folders(tmp_path_factory) -> dict[str, Path]:
    """Site folders of links: "base" to what the base requirements pull in, EXTRA to what the extra adds."""
    work = tmp_path_factory.mktemp("requirements")
    base_names = closure(PYPROJECT["project"]["dependencies"])
    extra_names = closure(PYPROJECT["project"]["optional-dependencies"][EXTRA]) - base_names
    link_distributions(base_names, work / "base")
    link_distributions(extra_names, work / EXTRA)
    return {"base": work / "base", EXTRA: work / EXTRA}


def fresh_venv(work: Path, folders: list[Path]) -> Venv:
    venv.create(work / "venv", with_pip=False)
    for folder in folders:
        see(work / "venv", folder)
    return Venv(work / "venv", work)


@pytest.fixture(scope="module")
def base(wheel, requirement_folders, tmp_path_factory) -> Venv:
    """A fresh venv where ``pip install <project>`` installed the project and the base requirements only."""
    environment = fresh_venv(tmp_path_factory.mktemp("base"), [requirement_folders["base"]])
    installed = environment.pip_install(str(wheel))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return environment


def test_the_base_install_has_no_torch_and_the_package_comes_from_the_install(base):
    where = base.run("python", "-c", "import model_debugging; print(model_debugging.__file__)")
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(base.bin.parent)) and str(ROOT) not in where.stdout
    for module in ("torch", "safetensors"):
        assert "ModuleNotFoundError" in base.run("python", "-c", f"import {module}").stderr


def test_scan_report_and_check_skips_run_in_the_base_install(base, tmp_path):
    repo = tmp_path / "transformers"
    shutil.copytree(EXAMPLE, repo)
    scan = base.run("model-debugging", "scan", "--repo", str(repo), "--output_dir", "out", cwd=tmp_path)
    assert scan.returncode == 0, scan.stderr
    report = base.run(
        "model-debugging", "report", "--current", "out/all_tests_scan_result.json", cwd=tmp_path
    )
    assert report.returncode == 0 and "Most skipped tests" in report.stdout, report.stderr
    plot = base.run(
        "model-debugging",
        "report",
        "--current",
        "out/all_tests_scan_result.json",
        "--plot",
        "p.png",
        cwd=tmp_path,
    )
    assert (plot.returncode, plot.stdout) == (2, "")  # refused before any work: no plot extra here
    assert plot.stderr == (
        "model-debugging report: error: --plot needs matplotlib: install the 'plot' extra, "
        "e.g. pip install 'model-debugging[plot]'\n"
    )

    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    model = repo / "tests" / "models" / "tiny_llama" / "test_modeling_tiny_llama.py"
    skip = '\n@unittest.skip("generation is fused")\ndef test_greedy_generate(self):\n    pass\n'
    model.write_text(model.read_text() + textwrap.indent(skip, "    "))  # no model skipped it before
    check = base.run("model-debugging", "check-skips", "--repo", str(repo), "--base", "main", cwd=tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "test_greedy_generate" in check.stdout and "generation is fused" in check.stdout


def test_scan_joins_a_test_run_and_finds_inert_tests_in_the_base_install(base, tmp_path):
    repo = write_tree(tmp_path / "checkout", observed_tree_files())
    run = run_pytest(repo, "tests/models", f"--junitxml={tmp_path / 'junit.xml'}")  # this project's pytest
    assert run.returncode == 0, run.stdout
    scan = base.run(
        "model-debugging",
        "scan",
        "--repo",
        str(repo),
        "--output_dir",
        "out",
        "--observed",
        str(tmp_path / "junit.xml"),
        "--inert",
        cwd=tmp_path,
    )
    assert scan.returncode == 0, scan.stderr
    assert "Undecided pairs: 4 -> 1 (3 decided by the runs)" in scan.stdout
    assert "Inert pairs (ran without reaching an assertion): 3" in scan.stdout
    report = base.run(
        "model-debugging", "report", "--current", "out/all_tests_scan_result.json", cwd=tmp_path
    )
    assert report.returncode == 0 and "Current scan: the combined status of 7 tests" in report.stdout


@pytest.mark.parametrize(
    "script", ["scan_skipped_tests.py", "skip_report.py", "check_new_skips.py", "scan_cache_key.py"]
)
def test_the_analyzer_scripts_of_utils_run_in_the_base_install(base, script):
    result = base.run("python", str(ROOT / "utils" / script), "--help")
    assert result.returncode == 0 and result.stdout.startswith(f"usage: utils/{script}"), result.stderr


def test_the_debugger_commands_name_the_extra_in_the_base_install(base):
    compare = base.run("model-debugging", "compare", "a", "b")
    assert compare.returncode == 2
    assert compare.stderr == (
        "model-debugging compare: error: this needs torch, which the base install leaves out: "
        f"install the debugger extra (pip install 'model-debugging[{EXTRA}]')\n"
    )


def test_the_extra_adds_torch_and_safetensors_and_the_installed_torch_is_kept(
    wheel, requirement_folders, tmp_path
):
    environment = fresh_venv(tmp_path, [requirement_folders["base"]])
    wanted = f"{wheel}[{EXTRA}]"
    missing = environment.pip_install(wanted)  # nothing visible offers torch: the extra does require it
    assert missing.returncode != 0 and "torch" in missing.stdout + missing.stderr
    see(environment.bin.parent, requirement_folders[EXTRA])
    installed = environment.pip_install(wanted)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    trace = environment.run("python", "-c", TRACE, "a", "b")
    assert trace.returncode == 0, trace.stderr
    assert trace.stdout.strip() == importlib.metadata.version("torch")  # the installed build, kept
    compare = environment.run("model-debugging", "compare", "a", "b")
    assert compare.returncode == 0, compare.stdout + compare.stderr
