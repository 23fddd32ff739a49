"""The one table of handlers every model registers into (see :mod:`~model_debugging.skips.interp.handlers`).

A model module registers its handlers when it is imported; :func:`~model_debugging.skips.models.table.model_handlers`
imports them all and gives the table whole.
"""

from model_debugging.skips.interp.handlers import Handlers

HANDLERS = Handlers()
