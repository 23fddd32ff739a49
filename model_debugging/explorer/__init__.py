"""The trace explorer: one self-contained HTML page to look at a trace, or at where two traces diverge.

- :mod:`.view`: ``write_view`` and ``view_document`` (also ``from model_debugging import write_view``);
- :mod:`.page`: the page, its assets inlined; :mod:`.calls`, :mod:`.badges`, :mod:`.overlay`,
  :mod:`.comparison_view`, :mod:`.tensor_view`, :mod:`.histogram`, :mod:`.source`: what it shows;
- :mod:`.command`: ``model-debugging view``.
"""
