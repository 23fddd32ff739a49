"""model-debugging: trace, compare and test-audit models in transformers-style libraries.

Every public name is imported from here (``from model_debugging import compare_traces``); the
modules ``model_debugging.model_debugging_utils``, ``output_capturing`` and ``monkey_patching``
repeat some of them under the module names transformers uses, so upstream code runs with only its
import lines changed.

Names are imported on first use. Importing any part of the package runs this file first, and the
base install (the skipped-test analyzer and its reports) has no torch: the debugger, compare,
explorer, replay, porting and capture names need the ``debugger`` extra and are imported only
when used.
"""

from importlib import import_module

from model_debugging.command_line import DEBUGGER_EXTRA_MODULES, missing_extra

__version__ = "0.1.0"

# module -> the public names it defines (or, for capture, its package exports)
_EXPORTS_BY_MODULE = {
    "model_debugging.debugger.context": ("model_addition_debugger_context",),
    "model_debugging.debugger.trace_format.names": ("TracePaths", "trace_paths"),
    "model_debugging.debugger.trace_format.records": ("TensorRecord", "Trace", "TraceError", "TraceNode"),
    "model_debugging.debugger.trace_format.reading": ("read_trace",),
    "model_debugging.debugger.trace_format.frame": ("load_trace",),
    "model_debugging.compare.engine": ("compare_traces",),
    "model_debugging.compare.align": ("CallPair", "TraceAlignment", "align_traces"),
    "model_debugging.compare.call_result": ("AlignmentKind", "ModuleComparison", "ModuleStatus"),
    "model_debugging.compare.result": ("AlignmentSummary", "TraceComparison"),
    "model_debugging.compare.renames": ("RenameRule", "RenameRuleError"),
    "model_debugging.explorer.view": ("view_document", "write_view"),
    "model_debugging.replay.api": ("replay_trace",),
    "model_debugging.replay.judging": ("Tolerance",),
    "model_debugging.replay.result": ("ModuleReplay", "NoiseJudgement", "ReplayResult", "ReplayVerdict"),
    "model_debugging.porting.api": ("DebugPortError", "PortCheck", "debug_port"),
    "model_debugging.capture": (
        "DEFAULT_PATCH_NAMESPACES",
        "BaseModelOutput",
        "BaseModelOutputWithPast",
        "ModelOutput",
        "OutputRecorder",
        "PatchKeyNotFoundError",
        "apply_patches",
        "capture_outputs",
        "clear_patch_mapping",
        "get_patch_mapping",
        "get_patch_namespaces",
        "merge_with_config_defaults",
        "patch_output_recorders",
        "register_patch_mapping",
        "register_patch_namespace",
        "remove_capture_hooks",
        "unregister_patch_mapping",
        "unregister_patch_namespace",
    ),
    "model_debugging.skips.scan": ("scan_repository",),
    "model_debugging.skips.decide.scope": ("UnknownTestError",),
    "model_debugging.skips.records.outcome": ("Status",),
    "model_debugging.skips.records.test_files": ("SkipKind",),
    "model_debugging.skips.results.scan_result": ("ClassVerdict", "ScanResult", "SkippedPair", "TestResult"),
    "model_debugging.skips.source.checkout": ("CheckoutError",),
    "model_debugging.skips.source.settings": ("DEFAULT_SETTINGS", "ScanSettings", "load_settings"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS_BY_MODULE.items() for name in names}
__all__ = ["__version__", *sorted(_MODULE_OF)]


def __getattr__(name: str):
    module_name = _MODULE_OF.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name not in DEBUGGER_EXTRA_MODULES:  # not what the extra adds: a real error
            raise
        raise ModuleNotFoundError(
            f"model_debugging.{name}: {missing_extra(error.name)}", name=error.name
        ) from error
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
