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


def test_names_that_differ_only_at_the_end_stay_distinct():
    names = [
        "test_flash_attention_3_padding_matches_padding_free_with_position_ids",
        "test_flash_attention_3_padding_matches_padding_free_with_position_ids_and_fa_kwargs",
        "test_short",
    ]
    lines = render_terminal_table([{"test": name} for name in names], max_width=40).splitlines()[2:]
    shown = [line.strip() for line in lines]
    assert len(set(shown)) == 3
    assert all(len(text) <= 40 for text in shown)
    assert shown[1].endswith("fa_kwargs") and shown[2] == "test_short"


def test_free_text_is_cut_at_its_end():
    reasons = ["Model does not output attentions because " + "x" * 50, "Model does not support SDPA"]
    lines = render_terminal_table([{"reason": reason} for reason in reasons], max_width=30).splitlines()
    assert lines[2].strip() == reasons[0][:29] + "…"
