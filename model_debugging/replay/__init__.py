"""Replay: run the candidate's modules alone on the inputs recorded in a reference trace.

- :mod:`.arguments`: a recorded call's args and kwargs rebuilt (tensor files and plain literals);
- :mod:`.targets`: the candidate's submodule or function that runs a recorded call;
- :mod:`.judging`: tensor differences (compare's numeric diff) and dtype-aware tolerances;
- :mod:`.noise`: the reference's own spread, from a second run of it;
- :mod:`.runner`: one call replayed and judged; :mod:`.bisection`: the smallest wrong module;
- :mod:`.api`: :func:`~model_debugging.replay.api.replay_trace`; :mod:`.command`: ``model-debugging replay``,
  with :mod:`.candidate` the model its ``--model`` names.
"""
