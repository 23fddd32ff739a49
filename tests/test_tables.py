from model_debugging.reporting.tables import render_markdown_table, render_terminal_table


def test_markdown_escapes_pipes():
    text = render_markdown_table([{"test": "a|b", "share": 0.5}])
    assert text.splitlines() == ["| test | share |", "| --- | --- |", "| a\\|b | 0.5 |"]


def test_terminal_aligns_and_truncates():
    text = render_terminal_table([{"name": "x" * 100, "count": 1}], max_width=10)
    header, rule, row = text.splitlines()
    assert row.startswith("xxxxxxxxx…")
    assert header.index("count") == row.index("1")


def test_save_figure_writes_png(tmp_path):
    from model_debugging.reporting.figures import import_pyplot, save_figure

    plt = import_pyplot()
    figure, axes = plt.subplots()
    axes.plot([1, 2, 3])
    target = save_figure(figure, tmp_path / "plot.png")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
