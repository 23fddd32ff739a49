"""Compare tests read whole report lines: a wide terminal, unless a test sets its own width."""

import pytest


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
