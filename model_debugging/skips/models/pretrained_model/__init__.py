"""Models of the library: class flags, module trees, instance attributes, embeddings, conversions."""
