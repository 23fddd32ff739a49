"""The automatic alignment written back as rename rules the user can save, edit and pass back.

Each inferred one-to-one pair becomes a rule that rewrites the candidate's path (relative to the
model, after the user's own rules) into the reference's. Layer numbers that agree on both sides
become a ``(\\d+)`` group, so one rule covers every layer. Fused and split projections and the
identity calls that dropped out have no rename equivalent: they are listed as YAML comments (the
alignment finds them again when the rules are passed back).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from model_debugging.compare.align import AlignmentKind, TraceAlignment
from model_debugging.compare.renames import RenameRule, apply_rename_rules
from model_debugging.compare.result import AlignmentSummary

_LISTED = 5  # fused pairs and identity calls named in the comments; the rest are counted


def _exact(candidate: str, reference: str) -> tuple[str, str]:
    return f"^{re.escape(candidate)}$", reference.replace("\\", "\\\\")


def _generalized(candidate: str, reference: str) -> tuple[str, str]:
    """(pattern, replacement) with the layer numbers both paths share, in the same order, as groups."""
    candidate_parts, reference_parts = candidate.split("."), reference.split(".")
    numbers = [part for part in candidate_parts if part.isdigit()]
    if not numbers or numbers != [part for part in reference_parts if part.isdigit()]:
        return _exact(candidate, reference)
    pattern = r"\.".join(r"(\d+)" if part.isdigit() else re.escape(part) for part in candidate_parts)
    groups = iter(range(1, len(numbers) + 1))
    replacement = ".".join(f"\\{next(groups)}" if part.isdigit() else part for part in reference_parts)
    return f"^{pattern}$", replacement


def _module_calls_paired_apart(alignment: TraceAlignment) -> dict[str, set[str]]:
    """Candidate paths whose calls the alignment paired with calls of different reference modules
    (a port's one embedding called for the encoder and for the decoder): no rule can say that."""
    targets: dict[str, set[str]] = {}
    for pair in alignment.pairs:
        if pair.kind is AlignmentKind.INFERRED:
            candidate = _renamed(alignment, 1, pair.candidate[0])
            targets.setdefault(candidate, set()).add(_renamed(alignment, 0, pair.reference[0]))
    return {candidate: references for candidate, references in targets.items() if len(references) > 1}


def inferred_rename_rules(alignment: TraceAlignment) -> tuple[RenameRule, ...]:
    """Rules that pair by path what the alignment paired one to one, in execution order (except the
    calls of one module paired with different modules: the alignment finds them again)."""
    apart = _module_calls_paired_apart(alignment)
    by_pattern: dict[str, list[tuple[str, str]]] = {}
    for pair in alignment.pairs:
        if pair.kind is not AlignmentKind.INFERRED:
            continue
        reference = _renamed(alignment, 0, pair.reference[0])
        candidate = _renamed(alignment, 1, pair.candidate[0])
        if reference != candidate and candidate not in apart:
            by_pattern.setdefault(_generalized(candidate, reference)[0], []).append((candidate, reference))
    rules: dict[str, str] = {}
    for pattern, paths in by_pattern.items():
        replacements = {_generalized(*path)[1] for path in paths}
        if len(replacements) == 1:
            rules[pattern] = replacements.pop()
        else:  # the layer numbers correspond differently from layer to layer: one rule per path
            rules.update(_exact(*path) for path in paths)
    return tuple(RenameRule.compile(pattern, replacement) for pattern, replacement in rules.items())


def _renamed(alignment: TraceAlignment, side: int, index: int) -> str:
    tree = (alignment.reference, alignment.candidate)[side]
    return apply_rename_rules(alignment.rules, tree.relative_paths[index])


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def rename_rules_yaml(alignment: TraceAlignment) -> str:
    """The user's rules followed by the inferred ones, as a ``--config`` YAML file."""
    rules = (*alignment.rules, *inferred_rename_rules(alignment))
    lines = [
        "# Rename rules for model-debugging compare --config FILE (the given ones, then the inferred ones).",
        "renames:" if rules else "renames: []",
    ]
    for rule in rules:
        lines += [
            f"  - pattern: {_quoted(rule.pattern.pattern)}",
            f"    replacement: {_quoted(rule.replacement)}",
        ]
    lines += _comment_block("fused or split projections (aligned automatically)", _projections(alignment))
    lines += _comment_block(
        "calls of one module paired with different modules (aligned automatically)",
        [
            f"{candidate} = {' / '.join(sorted(references))}"
            for candidate, references in _module_calls_paired_apart(alignment).items()
        ],
    )
    identities = [
        tree.node(index).module_path
        for tree, indices in (
            (alignment.reference, alignment.identity_reference),
            (alignment.candidate, alignment.identity_candidate),
        )
        for index in indices
    ]
    lines += _comment_block("identity calls that dropped out (output equal to input)", identities)
    return "\n".join(lines) + "\n"


def _projections(alignment: TraceAlignment) -> list[str]:
    described = []
    for pair in alignment.pairs:
        if pair.kind in (AlignmentKind.FUSED, AlignmentKind.SPLIT):
            reference = " + ".join(alignment.reference.node(index).module_path for index in pair.reference)
            candidate = " + ".join(alignment.candidate.node(index).module_path for index in pair.candidate)
            described.append(f"{reference} = {candidate}")
    return described


def _comment_block(title: str, entries: Iterable[str]) -> list[str]:
    entries = list(entries)
    if not entries:
        return []
    lines = [f"# {title}: {len(entries)}"] + [f"#   {entry}" for entry in entries[:_LISTED]]
    if len(entries) > _LISTED:
        lines.append(f"#   ... {len(entries) - _LISTED} more")
    return lines


def summarize_alignment(alignment: TraceAlignment) -> AlignmentSummary:
    """What the report says about the alignment."""
    kinds = [pair.kind for pair in alignment.pairs]
    return AlignmentSummary(
        inferred=alignment.inferred,
        from_shapes_only=alignment.from_shapes_only,
        inferred_pairs=kinds.count(AlignmentKind.INFERRED),
        projections=kinds.count(AlignmentKind.FUSED) + kinds.count(AlignmentKind.SPLIT),
        identities=len(alignment.identity_reference) + len(alignment.identity_candidate),
        rename_rules_yaml=rename_rules_yaml(alignment),
        unaligned=alignment.unaligned_reason(),
    )
