"""Reports on scan results: the weekly trend, the pull-request check, tables and plots."""
