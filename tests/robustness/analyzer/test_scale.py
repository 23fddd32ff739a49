"""Scale: a cold scan's peak memory grows by a bounded amount per file, and its answer stays exact.

``make test`` runs 100 and 400 generated files; ``benchmarks/bench_scanner_scale.py`` the full
1x/2x/5x/10x of transformers' 440 model test files, with peak RSS and time.
"""

import json
import random
import tracemalloc

import pytest

from model_debugging.skips import scan_repository, synthetic

SMALL, LARGE = 50, 200
# What one more generated file (about 2.6 KB, 1.2 test classes) may add to the peak: its share of the
# result and its parsed records, which stay for the whole scan because resolution crosses files
# (measured: about 14 KiB; 22 KiB before the scan stopped keeping every model's resolved classes,
# file contents and per-test outcome objects).
MAX_GROWTH_PER_FILE = 18 * 1024


def _cold_scan(files: int, root) -> tuple[int, int]:
    """(peak traced bytes during the scan, JSON size of its result) for a generated checkout of ``files``."""
    spec = synthetic.random_checkout(random.Random(1), files)
    repo = synthetic.write_checkout(spec, root / str(files))
    import libcst  # noqa: F401  (imported once, outside the measure)

    tracemalloc.start()
    try:
        results, errors = scan_repository(repo, use_cache=False, jobs=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert errors == []
    assert results == synthetic.expected_results(spec)
    return peak, len(json.dumps(results))


@pytest.mark.slow
def test_peak_memory_grows_by_a_bounded_amount_per_file(tmp_path):
    small_peak, small_result = _cold_scan(SMALL, tmp_path)
    large_peak, large_result = _cold_scan(LARGE, tmp_path)
    growth, result_growth = large_peak - small_peak, large_result - small_result
    print(
        f"\n{SMALL} -> {LARGE} files: peak +{growth / 2**20:.1f} MiB, result +{result_growth / 2**20:.1f} MiB"
    )
    assert growth <= MAX_GROWTH_PER_FILE * (LARGE - SMALL)
