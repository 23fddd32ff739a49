"""The model addition debugger: a nested trace of every module call of a forward pass.

- :mod:`.context`: ``model_addition_debugger_context``, which installs the tracer and restores the model;
- :mod:`.tracer`, :mod:`.forward_patches`, :mod:`.function_records`, :mod:`.recursion`: what is recorded
  on each call;
- :mod:`.tensors`, :mod:`.tensor_repr`, :mod:`.statistics`, :mod:`.fused_statistics`, :mod:`.reuse`:
  tensor entries as upstream writes them, and our float64 statistics;
- :mod:`.prune`: the first and last of a run of numbered layers;
- :mod:`.file_queue`, :mod:`.single_thread`: tensor files written off the forward's thread;
- :mod:`.trace_format`: the trace files, written and read.
"""
