"""Checking a port against its reference in one call: :func:`debug_port` and ``model-debugging debug-port``.

- :mod:`.api`: :func:`debug_port` traces both models, compares them, writes the page, prints the verdict;
- :mod:`.command`: the command line form, which builds both models and the inputs from a script.
"""
