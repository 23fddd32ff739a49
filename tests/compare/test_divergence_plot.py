import pytest

from model_debugging.compare.divergence_plot import plot_divergence


@pytest.mark.parametrize(
    "values",
    [[0.0, 0.0, 1e-3, 0.5], [0.0, None, 0.0], [None, None]],
    ids=["zeros_and_positives", "no_positive_value", "nothing_measured"],
)
def test_plot_is_written_for_any_mix_of_zeros_and_gaps(tmp_path, values):
    labels = [f"m{i}" for i in range(len(values))]
    path = plot_divergence(labels, values, tmp_path / "plot.png", marked=len(values) - 1, tolerance=1e-5)
    assert path == tmp_path / "plot.png"
    assert path.read_bytes().startswith(b"\x89PNG")
    assert not list(tmp_path.glob(".*.tmp"))


def test_suffix_picks_the_format(tmp_path):
    path = plot_divergence(["a", "b"], [0.0, 1.0], tmp_path / "plot.svg")
    assert b"<svg" in path.read_bytes()[:500]
