"""Resolve classes across files: imports, the MRO, the library index, which test classes pytest collects."""
