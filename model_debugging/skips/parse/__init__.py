"""Parse each test file once with libcst into records; read the library's sources with ast into records."""
