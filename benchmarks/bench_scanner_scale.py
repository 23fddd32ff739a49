"""Peak memory and time of a cold scan of generated checkouts 1x, 2x, 5x and 10x transformers' size.

transformers' tests hold about 440 model test files; 10x is about 4,400. Each size is generated with
``tests/support/synthetic.py`` (its answer is known, and checked) and scanned in a fresh process
without cache, so the figures are those of one cold ``scan_skipped_tests.py`` run:

    python benchmarks/bench_scanner_scale.py                 # 1x 2x 5x 10x of 440 files
    python benchmarks/bench_scanner_scale.py --scales 1 2 --base_files 100 --jobs 1

Memory is the peak resident set of the scanning process (the parsing workers are reported apart).
It should not grow with the number of files beyond the result itself: the last column gives the
growth of the peak over the 1x run per added file, next to the growth of the result's JSON size.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import synthetic  # noqa: E402

TRANSFORMERS_MODEL_TEST_FILES = 440
# Runs in a fresh process: baseline after imports, then one cold scan; prints one JSON line.
_MEASURE = """
import json, resource, sys, time
from model_debugging import scan_repository
import libcst, tqdm  # imported by any real run: part of the baseline, not of the scan

def peak_mib(who):
    if who == resource.RUSAGE_SELF:  # VmHWM starts afresh at exec; ru_maxrss keeps the parent's peak
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(who).ru_maxrss / 1024

baseline = peak_mib(resource.RUSAGE_SELF)
start = time.perf_counter()
scan = scan_repository(sys.argv[1], use_cache=False, jobs=int(sys.argv[2]))
seconds = time.perf_counter() - start
results, errors = scan.to_json(), scan.errors
print(json.dumps({
    "seconds": seconds,
    "baseline_mib": baseline,
    "peak_mib": peak_mib(resource.RUSAGE_SELF),
    "workers_peak_mib": peak_mib(resource.RUSAGE_CHILDREN),
    "result_mib": len(json.dumps(results)) / 2**20,
    "errors": len(errors),
    "results": sys.argv[3] if len(sys.argv) > 3 else None,
}))
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as handle:
        json.dump(results, handle)
"""


def measure(files: int, jobs: int, workdir: Path, seed: int = 0) -> dict:
    spec = synthetic.random_checkout(random.Random(seed), files)
    repo = synthetic.write_checkout(spec, workdir / f"checkout_{files}")
    answer = workdir / f"result_{files}.json"
    command = [sys.executable, "-c", _MEASURE, str(repo), str(jobs), str(answer)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.splitlines()[-1])
    figures["files"] = files
    figures["correct"] = json.loads(answer.read_text()) == synthetic.expected_results(spec)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 2, 5, 10])
    parser.add_argument("--base_files", type=int, default=TRANSFORMERS_MODEL_TEST_FILES)
    parser.add_argument("--jobs", type=int, default=2, help="parsing processes (default: %(default)s)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for scale in args.scales:
            rows.append(measure(round(args.base_files * scale), args.jobs, Path(workdir)))
            row = rows[-1]
            added = row["files"] - rows[0]["files"]
            growth = row["peak_mib"] - rows[0]["peak_mib"]
            result_growth = row["result_mib"] - rows[0]["result_mib"]
            per_file = (
                f"{growth * 1024 / added:5.1f} KiB/file ({result_growth * 1024 / added:.1f} of result)"
                if added
                else "-"
            )
            print(
                f"{row['files'] / args.base_files:>5.1f}x {row['files']:>6} files  {row['seconds']:7.1f} s  "
                f"peak {row['peak_mib']:7.1f} MiB (baseline {row['baseline_mib']:.1f}, workers "
                f"{row['workers_peak_mib']:.1f})  result {row['result_mib']:6.1f} MiB JSON  "
                f"growth over 1x: {per_file}  correct={row['correct']}",
                flush=True,
            )
    return 0 if all(row["correct"] and row["errors"] == 0 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
