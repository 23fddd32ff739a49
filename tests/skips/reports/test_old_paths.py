"""``model_debugging.skips_report.*`` keeps working for one release, with a DeprecationWarning."""

import subprocess
import sys

OLD_IMPORTS = [
    "from model_debugging.skips_report import compute_trend, find_introduced_skips",
    "from model_debugging.skips_report.trend import compute_trend",
    "from model_debugging.skips_report.pr_check_command import main",
    "from model_debugging.skips_report.report_command import main",
    "from model_debugging.skips_report.settings import load_settings",
    "from model_debugging.skips_report.git_snapshot import export_revision",
]


def test_old_import_paths_warn_and_give_the_new_objects():
    # a fresh interpreter: the warning comes when the old package is first imported
    code = "\n".join(
        [
            "import warnings",
            "with warnings.catch_warnings(record=True) as caught:",
            "    warnings.simplefilter('always')",
            *(f"    {statement}" for statement in OLD_IMPORTS),
            "print([str(w.message) for w in caught if w.category is DeprecationWarning])",
            "import model_debugging.skips_report.trend as old, model_debugging.skips.report.trend as new",
            "print(old is new)",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    warned, same = result.stdout.splitlines()
    assert (
        "model_debugging.skips_report is deprecated" in warned
        and "import from model_debugging.skips" in warned
    )
    assert same == "True"
