"""Scale: a cold scan's memory beyond its result does not grow with the number of files; answer exact.

``make test`` runs 100 and 400 generated files; ``benchmarks/bench_scanner_scale.py`` the full
1x/2x/5x/10x of transformers' 440 model test files, with peak RSS and time.
"""

import json
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from model_debugging import scan_repository
from tests.support import synthetic

SMALL, LARGE = 50, 200
# Only the files other files import stay in memory; every other file's records are read again for its
# model and dropped, and per-test entries are folded model by model. What the peak holds beyond the
# result (kept after the scan) may grow by this much per added file: its path and cache key (measured:
# it does not grow, the peak being the in-process parse of one file; before streaming, about 12 KiB
# per file of records stayed for the whole scan, and the raw peak grew by about 14 KiB per file).
MAX_OVERHEAD_GROWTH_PER_FILE = 1024
# The raw peak may grow by the result's share (its Python objects: about 2x its JSON, 2.2 KiB a file).
MAX_GROWTH_PER_FILE = 6 * 1024


def _cold_scan(files: int, root) -> tuple[int, int, int]:
    """(peak traced bytes during the scan, traced bytes its result keeps, JSON size of the result)."""
    spec = synthetic.random_checkout(random.Random(1), files)
    repo = synthetic.write_checkout(spec, root / str(files))
    import libcst  # noqa: F401  (imported once, outside the measure)

    tracemalloc.start()
    try:
        scan = scan_repository(repo, use_cache=False, jobs=1)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    results = scan.to_json()  # the JSON shape is made at output, outside the measure
    assert scan.errors == ()
    assert results == synthetic.expected_results(spec)
    return peak, kept, len(json.dumps(results))


def _cold_scans_in_a_fresh_process(root: Path) -> list[tuple[int, int, int]]:
    """Both scans measured in a new interpreter: tracemalloc counts every thread's allocations, and
    threads or caches other tests leave behind in a shared worker would be measured with the scan."""
    code = (
        "import json, sys; from pathlib import Path; from tests.robustness.analyzer.test_scale import _cold_scan; "
        f"print(json.dumps([_cold_scan(n, Path(sys.argv[1])) for n in ({SMALL}, {LARGE})]))"
    )
    project = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)], cwd=project, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_peak_memory_beyond_the_result_does_not_grow_with_the_number_of_files(tmp_path):
    (small_peak, small_kept, small_result), (large_peak, large_kept, large_result) = (
        _cold_scans_in_a_fresh_process(tmp_path)
    )
    growth, result_growth = large_peak - small_peak, large_result - small_result
    overhead_growth = (large_peak - large_kept) - (small_peak - small_kept)
    print(
        f"\n{SMALL} -> {LARGE} files: peak +{growth / 2**20:.2f} MiB, beyond the result "
        f"+{overhead_growth / 2**20:.2f} MiB, result +{result_growth / 2**20:.2f} MiB JSON"
    )
    assert overhead_growth <= MAX_OVERHEAD_GROWTH_PER_FILE * (LARGE - SMALL)
    assert growth <= MAX_GROWTH_PER_FILE * (LARGE - SMALL)
