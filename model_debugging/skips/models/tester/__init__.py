"""Model testers: their configuration keywords, inputs and tensors, read from their methods."""
