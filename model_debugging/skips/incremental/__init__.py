"""The cache and the incremental rescan, wrapped around a scan: a later scan answers from what an earlier one kept."""
