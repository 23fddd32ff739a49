"""A collected test class as the common tests see it: its flags, overrides and imported names."""
