"""The whole table of the models' handlers: importing a model module registers its handlers.

The ordered questions (module-level names, comparisons) are asked of every handler in turn; each
handler answers names and kinds of its own, so the order of registration decides nothing.
"""

from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.models import environment, source_files, torch_nn  # noqa: F401 - they register
from model_debugging.skips.models.config import handlers as config_handlers  # noqa: F401
from model_debugging.skips.models.generation_cache import handlers as generation_handlers  # noqa: F401
from model_debugging.skips.models.pretrained_model import handlers as model_handlers_  # noqa: F401
from model_debugging.skips.models.registry import HANDLERS
from model_debugging.skips.models.test_class import handlers as test_class_handlers  # noqa: F401
from model_debugging.skips.models.tester import handlers as tester_handlers  # noqa: F401


def model_handlers() -> Handlers:
    """The table every model module has registered into."""
    return HANDLERS
