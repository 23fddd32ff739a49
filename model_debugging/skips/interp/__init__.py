"""The interpreter: runs a test's body on symbolic values (known, partly known, unknown)."""
