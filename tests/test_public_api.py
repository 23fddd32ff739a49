"""The public API: every name of ``model_debugging.__all__`` imports from the top level, always as the
same object, and the package has no other lazy facades or forwarding modules."""

import json
import pkgutil
import subprocess
import sys

import model_debugging
import model_debugging.capture
import model_debugging.monkey_patching
import model_debugging.output_capturing

# Run in a fresh interpreter: import every module of the package (importing a subpackage sets an
# attribute of its parent, which must never hide a public name), then every public name.
IMPORT_EVERYTHING = """
import importlib, json, sys, model_debugging
forwarding = []
for name in sys.argv[1:]:
    if "__getattr__" in vars(importlib.import_module(name)):
        forwarding.append(name)
modules = [name for name in model_debugging.__all__ if isinstance(getattr(model_debugging, name), type(sys))]
for name in model_debugging.__all__:
    exec(f"from model_debugging import {name}")
print(json.dumps({"forwarding": forwarding, "modules": modules, "names": len(model_debugging.__all__)}))
"""


def test_every_public_name_imports_from_the_top_level_and_nothing_else_forwards_names():
    every_module = [info.name for info in pkgutil.walk_packages(model_debugging.__path__, "model_debugging.")]
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING, *every_module], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["modules"] == []  # every public name is a function, class or constant, not a module
    assert found["forwarding"] == []  # the top level alone imports names on first use
    assert found["names"] == len(model_debugging.__all__) > 50


def test_the_public_names_are_listed_once_and_seen_by_dir():
    assert len(set(model_debugging.__all__)) == len(model_debugging.__all__)
    assert set(model_debugging.__all__) <= set(dir(model_debugging))


def test_capture_and_the_upstream_compatible_modules_give_the_same_objects():
    for module in (
        model_debugging.capture,
        model_debugging.output_capturing,
        model_debugging.monkey_patching,
    ):
        assert set(module.__all__) <= set(model_debugging.__all__), module.__name__
        for name in module.__all__:
            assert getattr(module, name) is getattr(model_debugging, name), (module.__name__, name)
    from model_debugging.model_debugging_utils import model_addition_debugger_context

    assert model_addition_debugger_context is model_debugging.model_addition_debugger_context
