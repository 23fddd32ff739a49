"""Trace under a small RLIMIT_FSIZE, so the kernel itself fails the writes; print what happened as JSON.

Run by ``test_write_faults.py`` in its own process (the limit applies to the whole process):
``python file_size_limit_child.py <directory>``.
"""

import json
import resource
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file
from torch import nn

from model_debugging import model_addition_debugger_context

LIMIT_BYTES = 64 * 1024


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(128, 128)

    def forward(self, hidden):
        return self.proj(hidden)


def partial_files(directory: Path) -> list[str]:
    """Files that are not complete: temp files, JSON that does not parse, tensors that do not load."""
    bad = []
    for path in directory.iterdir():
        try:
            if path.name.startswith("."):
                raise ValueError("temporary file left behind")
            if path.suffix == ".json":
                json.loads(path.read_text())
            elif path.suffix == ".safetensors":
                load_file(path)
        except Exception as error:
            bad.append(f"{path.name}: {error}")
    return bad


def trace_once(directory: Path, use_repr: bool) -> dict:
    model = Wide()
    # 256 x 128 floats: a 128 KiB tensor file, and with the full repr a JSON far past the limit
    hidden = torch.randn(256, 128)
    torch.set_printoptions(threshold=10**9)
    try:
        with model_addition_debugger_context(model, debug_path=directory, use_repr=use_repr):
            model(hidden)
    except Exception as error:
        outcome = {"error_type": type(error).__name__, "error": str(error)}
    else:
        outcome = {"error_type": None, "error": None}
    outcome["model_untouched"] = all("forward" not in vars(module) for module in model.modules())
    outcome["partial_files"] = partial_files(directory)
    return outcome


def main() -> None:
    root = Path(sys.argv[1])
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of killing the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    outcomes = {}
    for use_repr in (True, False):
        directory = root / f"use_repr_{use_repr}"
        directory.mkdir()
        outcomes[f"use_repr={use_repr}"] = trace_once(directory, use_repr)
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main()
