"""Decide each (model, test) pair: the rules' findings first, then the interpreter on the test's body."""
