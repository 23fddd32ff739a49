"""The files `scan --observed` and `--stale_skips` write never replace a report they read.

A user who keeps the latest run's report under the name the scan writes (a symlink
``all_tests_observed.json`` -> ``../runs/junit.xml``, or a report folder beside it) had the junit
XML overwritten by the joined result: the run was lost. Each is refused before the scan, exit 2.
"""

import pytest

from model_debugging.skips.command import main as scan_main
from tests.skips.conftest import write_tree
from tests.skips.observed.test_observed_decorated_tests import FILES
from tests.support.pytest_runs import run_pytest


@pytest.fixture(scope="module")
def checkout_and_run(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("observed_outputs") / "checkout", FILES)
    runs = root.parent / "runs"
    run = run_pytest(root, "tests/models", f"--junitxml={runs / 'junit.xml'}")
    assert "2 passed" in run.stdout, run.stdout
    return root, runs / "junit.xml"


@pytest.mark.parametrize(
    ("written", "options"),
    [("all_tests_observed.json", ()), ("stale_skips.json", ("--stale_skips",))],
)
@pytest.mark.parametrize("given", ["file", "folder"])
def test_an_output_linked_to_an_observed_report_is_refused(
    checkout_and_run, tmp_path, capsys, written, options, given
):
    root, junit = checkout_and_run
    output = tmp_path / "out"
    output.mkdir()
    (output / written).symlink_to(junit)
    before = junit.read_bytes()
    observed = str(junit if given == "file" else junit.parent)
    code = scan_main(
        ["--repo", str(root), "--output_dir", str(output), "--no_cache", "--observed", observed, *options]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"--output_dir {output / written} is " in err and f"({junit}), which this command reads" in err
    assert junit.read_bytes() == before and (output / written).is_symlink()
    assert not (output / "all_tests_scan_result.json").exists()  # refused before the scan
