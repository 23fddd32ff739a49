"""What the tests of compare on the hand-written ports (tests/ports) check, case by case."""

from __future__ import annotations

import json
from pathlib import Path

from model_debugging.compare.command import main


def run_compare(reference: Path, candidate: Path, output: Path, *options: str) -> tuple[int, dict, str]:
    """``model-debugging compare`` with ``options`` as a user runs it: (exit code, its JSON, what it printed)."""
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main([str(reference), str(candidate), "--json", str(output), *options])
    return code, json.loads(output.read_text()), printed.getvalue()


def check_verdict(result: dict, code: int, root: str, origin: str | None, printed: str) -> None:
    """Exit 0 and equivalent with no origin, or exit 1 with the origin at ``root.origin`` (``""``:
    the root itself) and a difference that is said: a number above 0 or what differs."""
    summary = "\n".join(line for line in printed.splitlines() if not line.startswith("#"))
    if origin is None:
        assert (code, result["equivalent"]) == (0, True), summary
        assert result["divergence_origin"] is None
        return
    assert code == 1, summary
    found = result["divergence_origin"]
    assert found is not None, summary
    assert found["module_path"] == (f"{root}.{origin}" if origin else root), summary
    line = next(line for line in printed.splitlines() if line.startswith("divergence origin:"))
    assert "max abs diff 0)" not in line and "max abs diff 0;" not in line
    assert (found["max_abs_diff"] or 0) > 0 or found["details"], summary


def check_rules_round_trip(reference: Path, candidate: Path, directory: Path) -> None:
    """The inferred alignment saved as rename rules and passed back gives the same verdict."""
    rules = directory / "renames.yaml"
    code, inferred, _ = run_compare(
        reference, candidate, directory / "inferred.json", "--save_renames", str(rules)
    )
    again, by_rules, printed = run_compare(
        reference, candidate, directory / "rules.json", "--config", str(rules)
    )
    assert again == code
    for key in ("divergence_origin", "first_input_divergence"):
        assert (inferred[key] or {}).get("module_path") == (by_rules[key] or {}).get("module_path"), key
    assert inferred["equivalent"] == by_rules["equivalent"]


def check_skipped_call(result: dict, skipped: str, receiver: str) -> None:
    """The note names first the reference's call ``skipped`` (a norm the port forgets), as the one
    that made what ``receiver`` (the first call whose inputs differ) got, and says the port skips it."""
    note = result["origin_note"]
    assert note.startswith(f"{skipped} (no counterpart in the candidate) made what {receiver} receives"), note
    assert f"received what {skipped} was given: the port skips it; or else" in note, note
