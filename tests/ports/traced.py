"""Traces of the ports and their references, recorded once per test session and shared."""

from __future__ import annotations

from pathlib import Path

from tests.ports import Style
from tests.ports.catalog import ARCHITECTURES, port_inputs, trace

GELU = ["torch.nn.functional.gelu"]


class PortTraces:
    """``get(architecture, style, bug)`` -> (reference trace, port trace), each recorded on first use;
    ``functions=True`` records ``F.gelu`` calls on both sides, ``summary=True`` records summary traces
    (``use_repr=True``, the debugger's default: no tensor files)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._references: dict = {}
        self._traces: dict = {}

    def get(
        self, name: str, style: Style, bug, *, functions: bool = False, summary: bool = False, **port_options
    ) -> tuple[Path, Path]:
        architecture = ARCHITECTURES[name]
        options = {"record_functions": GELU} if functions else {}
        if summary:
            options["use_repr"] = True
        if name not in self._references:
            self._references[name] = architecture.reference()
        reference = self._references[name]
        suffix = ("-functions" if functions else "") + ("-summary" if summary else "")
        key = (name, functions, summary)
        if key not in self._traces:
            self._traces[key] = trace(
                reference, self.directory / f"{name}-reference{suffix}", architecture.inputs(), **options
            )
        label = "-".join([name, style.value, bug.name.lower(), *sorted(port_options)]) + suffix
        if label not in self._traces:
            port = architecture.port(reference, style, bug, **port_options)
            self._traces[label] = trace(port, self.directory / label, port_inputs(architecture), **options)
        return self._traces[key], self._traces[label]
