"""The generation cache: what a forward returns and when it builds or keeps a cache."""
