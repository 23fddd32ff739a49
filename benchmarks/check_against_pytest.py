"""Compare the scanner's answer with what pytest really did on a transformers checkout.

Run pytest on the checkout first (in its own venv), e.g. for a few common tests over some models:

    cd /path/to/transformers && HF_HUB_OFFLINE=1 python -m pytest tests/models/{llama,bert}/test_modeling_*.py \\
        -n 2 -rs -k "test_training or test_inputs_embeds" --junitxml=/tmp/junit.xml

then, from this project's root:

    python benchmarks/check_against_pytest.py --repo /path/to/transformers --junit /tmp/junit.xml

For every (model, test) pair present in the junit file, pytest's verdict (the model skips the test
when every one of its test classes skipped it) is compared with the scanner's. Pairs that pytest
skipped for an environment reason (GPU, slow, missing package, ...) are counted apart, and so are
no-op overrides, which pytest reports as passed and the scanner as skipped by design. Exit code 0
always; the disagreements are printed one per line.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_debugging.skips import scan_repository  # noqa: E402

# Skip reasons that depend on the machine, not on the model.
ENVIRONMENT_REASON = re.compile(
    r"\b(gpus?|cuda|accelerators?|xpu|npu|hpu|mps|multi[- ]gpu)\b|flash|\bslow\b|test requires|"
    r"not installed|is not available|deepspeed|bitsandbytes|torchvision|timm|\bkernels\b|compute capability",
    re.IGNORECASE,
)


def read_junit(paths: list[str]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(model, test) -> [(status, reason) per test class]; status is passed, failed or skipped."""
    pairs: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for path in paths:
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            parts = case.get("classname", "").split(".")
            if len(parts) < 5 or parts[:2] != ["tests", "models"]:
                continue
            model, test = parts[2], case.get("name", "").split("[")[0]
            skipped = case.find("skipped")
            if skipped is not None and skipped.get("type") == "pytest.xfail":
                pairs[model, test].append(("xfailed", ""))  # it ran, and failed as expected
            elif skipped is not None:
                pairs[model, test].append(("skipped", skipped.get("message", "")))
            elif case.find("failure") is not None or case.find("error") is not None:
                pairs[model, test].append(("failed", ""))
            else:
                pairs[model, test].append(("passed", ""))
    return pairs


def compare(repo: str, junit: list[str]) -> int:
    observed = read_junit(junit)
    results = scan_repository(repo).to_json()
    tests = sorted({test for _, test in observed if test in results})
    counts: dict[str, int] = defaultdict(int)
    disagreements = []
    for (model, test), classes in sorted(observed.items()):
        if test not in tests:
            continue
        entry = results[test]
        skip = next((item for item in entry["skips"] if item["model"] == model), None)
        if model in entry["models_skipped"]:
            predicted = "skipped"
        elif model in entry["models_ran"]:
            predicted = "ran"
        else:
            predicted = "not applicable"
        reasons = [reason for status, reason in classes if status == "skipped"]
        actual = "skipped" if len(reasons) == len(classes) else "ran"
        if actual == "skipped" and all(ENVIRONMENT_REASON.search(reason) for reason in reasons):
            counts["environment"] += 1
            continue
        if predicted == "skipped" and skip["kind"] == "noop_override" and actual == "ran":
            counts["noop"] += 1
            continue
        if predicted == "not applicable":  # `-k` also selected a model's own test of the same name
            counts["own"] += 1
            continue
        counts["compared"] += 1
        counts[f"pytest {actual}, scanner {predicted}"] += 1
        if predicted == actual:
            counts["agree"] += 1
            counts["same reason"] += bool(skip) and skip["reason"] in reasons
        else:
            scanner = f"{predicted} ({skip['kind']}: {skip['reason']})" if skip else predicted
            disagreements.append(f"{model} / {test}: pytest {actual} {reasons[:1]} | scanner {scanner}")
    models = {model for model, _ in observed}
    print(f"models: {len(models)}, tests: {len(tests)} ({', '.join(tests)})")
    print(f"{counts['agree']} of {counts['compared']} (model, test) pairs agree")
    for actual in ("skipped", "ran"):
        line = ", ".join(
            f"scanner {p}: {counts[f'pytest {actual}, scanner {p}']}" for p in ("skipped", "ran")
        )
        print(f"  pytest {actual:<7} -> {line}")
    print(f"  skips where the scanner's reason is pytest's message word for word: {counts['same reason']}")
    print(f"left out: {counts['environment']} skipped by pytest for an environment reason,")
    print(f"          {counts['noop']} no-op overrides (pytest: passed; scanner: skipped by design),")
    print(f"          {counts['own']} tests of a model's own that only share a common test's name")
    for line in disagreements:
        print(f"  DISAGREE {line}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the transformers checkout pytest ran on")
    parser.add_argument("--junit", required=True, nargs="+", help="junit XML file(s) written by pytest")
    args = parser.parse_args(argv)
    return compare(args.repo, args.junit)


if __name__ == "__main__":
    sys.exit(main())
