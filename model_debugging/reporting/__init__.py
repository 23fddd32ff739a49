"""What several tools share to write their results.

- :mod:`.atomic`: atomic writes (temp file and rename; symlinks followed, devices written through);
- :mod:`.report`: one report model (sections, tables) rendered to terminal text and markdown;
- :mod:`.tables`, :mod:`.csv_output`: tables for the terminal and markdown, and CSV;
- :mod:`.figures`: matplotlib on a headless backend, figures saved atomically;
- :mod:`.scan_results`, :mod:`.skip_plot`: the analyzer's scan results read into pandas, and its bar chart.

Modules are imported by their own path, so a command that only writes JSON imports no pandas
or matplotlib.
"""
