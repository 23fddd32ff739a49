"""Configurations: their attributes, constructors, sub-configurations and methods."""
