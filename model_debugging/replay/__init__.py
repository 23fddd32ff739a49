"""Replay: run the candidate's modules alone on the inputs recorded in a reference trace.

- :mod:`.arguments`: a recorded call's args and kwargs rebuilt (tensor files and plain literals);
- :mod:`.targets`: the candidate's submodule or function that runs a recorded call;
- :mod:`.judging`: tensor differences (compare's numeric diff) and dtype-aware tolerances;
- :mod:`.noise`: the reference's own spread, from a second run of it;
- :mod:`.runner`: one call replayed and judged; :mod:`.bisection`: the smallest wrong module;
- :mod:`.api`: :func:`replay`; :mod:`.command`: ``model-debugging replay``.

The package and the function share the name ``model_debugging.replay``; whichever of the two that
attribute holds (Python sets it to the package once a submodule is imported), calling it replays.
"""

import sys
import types

from model_debugging._lazy import lazy_exports

_EXPORTS_BY_MODULE = {
    ".api": ("replay",),
    ".result": ("ModuleReplay", "NoiseJudgement", "ReplayResult", "ReplayVerdict"),
    ".judging": ("Tolerance",),
}
_EXPORTS = {name: module for module, names in _EXPORTS_BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from model_debugging.replay.api import replay

        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
