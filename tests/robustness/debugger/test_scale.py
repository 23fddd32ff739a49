"""Tracing with ``use_repr=False`` writes tensors as they are produced: peak memory does not grow with depth.

The full measurement (8, 16, 32, 64 layers, with the untraced and the pruned forwards too) is
``python benchmarks/bench_debugger_scale.py`` (`make bench`); this runs the same code at 8 and 32 layers.
"""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).parents[3] / "benchmarks" / "bench_debugger_scale.py"


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_tensors_written():
    command = [sys.executable, str(BENCHMARK), "--layers", "8", "32", "--traced_modes", "all_layers"]
    result = subprocess.run(
        [*command, "--no_plain", "--check"], capture_output=True, text=True, timeout=300, check=False
    )
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "keeping every tensor would make it about 1" in result.stdout
