"""Trace comparison: which module calls to compare, how their tensors differ, and the verdict.

- :mod:`.matching`: pairs module calls of two traces (paths after rename rules, call order);
- :mod:`.align`: :func:`align_traces`, the calls paths leave unpaired aligned automatically
  (:mod:`.call_tree`, :mod:`.kinds`, :mod:`.evidence`, :mod:`.siblings`, :mod:`.fused`,
  :mod:`.wrappers`, :mod:`.leftovers`), written back as rules by :mod:`.inferred_renames`;
- :mod:`.renames`: the rename rules;
- :mod:`.arguments` and :mod:`.forms`: which value of a call is compared with which, and in what form;
- :mod:`.numeric`: differences between two recorded tensors (files or statistics);
- :mod:`.rows` and :mod:`.origin`: one row per pair of calls, and the divergence origin;
- :mod:`.checks` and :mod:`.boundaries`: whether the final outputs were compared, trace warnings,
  and the block-boundaries mode;
- :mod:`.result`: the typed result (`TraceComparison`) and its summary; :mod:`.call_result`: one
  row of it (`ModuleComparison`, `ModuleStatus`, `ValueComparison`);
- :mod:`.engine`: :func:`compare_traces`, which ties them together;
- :mod:`.rendering` and :mod:`.command`: the ``model-debugging compare`` report and command.

Traces are read only through :mod:`model_debugging.debugger.trace_format`.
"""
