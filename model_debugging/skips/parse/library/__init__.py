"""Read the library's sources (src/<package>/) into records: classes, mappings, constructor calls."""
