"""What the run-time evaluator needs to know about one test class, gathered by the analyzer."""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum

from model_debugging.skips.interp.handlers import Handlers
from model_debugging.skips.records.library import LibraryClass
from model_debugging.skips.resolve.library import Library


@dataclass(frozen=True)
class TesterCommon:
    """What ``prepare_config_and_inputs_for_common`` returns, as far as its source tells.

    ``config``: what the tester sets on the configuration after ``get_config()`` (``()`` when
    nothing), None when it cannot be followed (handed to a function not read, changed in a loop,
    built otherwise). ``inputs``: the dict, None when it is not read as a dict with string keys.
    ``passed``: the names a configuration built in the method itself (``XConfig(key=...)``) was
    given or set, None when it comes from ``get_config()`` or is unknown.
    """

    config: tuple[tuple[str, object], ...] | None
    inputs: dict[str, object] | None
    passed: frozenset[str] | None = None


UNREAD = TesterCommon((), None)  # the method could not be followed: the configuration is taken as built


class KeywordsRest(Enum):
    """What the configuration holds for a name the read ``get_config`` keywords leave out."""

    DEFAULT = "the class's default"  # the keywords are all that get_config passes
    TESTER = "the tester's attribute"  # a parent get_config passing the tester's attributes by name
    UNKNOWN = "unknown"  # a parent get_config that was not read


@dataclass(frozen=True)
class TestClassFacts:
    """One collected test class, seen from its common test's body.

    ``attribute`` / ``tester_attribute`` return a literal, an ``Unknown`` or :data:`ABSENT`;
    ``definition`` returns the ``ast`` definition ``self.<name>`` runs when it is written in a
    common file or overridden in a model's test file, else None (``inherited_definition``: what
    ``super().<name>`` runs from such an override); ``model_classes`` is ``all_model_classes`` resolved in the library
    (None when some name could not be); ``generative_classes`` is set when the class overrides
    ``all_generative_model_classes``; ``names`` are the model classes the model's test files import (the auto
    mappings a common file imports are looked up by name: ``facts.auto_mapping``, which wins); ``config_keywords`` the keywords the tester's
    ``get_config`` passes to the configuration class (None when it could not be read: the tester's
    attribute of the same name is then taken as what it passes).
    """

    library: Library
    name: str
    attribute: Callable[[str], object]
    tester_attribute: Callable[[str], object]
    definition: Callable[[str], ast.FunctionDef | None]
    model_classes: tuple[LibraryClass, ...] | None
    generative_classes: tuple[LibraryClass, ...] | None
    config_class: LibraryClass | None
    names: dict[str, object]
    config_keywords: dict[str, object] | None = None  # what the tester's get_config passes, when read
    common_inputs: dict[str, object] | None = None  # the inputs dict of prepare_config_and_inputs_for_common
    passed_config_names: frozenset[str] | None = None  # names passed to the config beyond its parameters
    inherited_definition: Callable[[str], ast.FunctionDef | None] | None = None  # what super().<name> runs
    # what the tester sets on the configuration after get_config() (None: not followed)
    common_config: tuple[tuple[str, object], ...] | None = ()
    # self.model_tester.<method>(*arguments, **keywords) run on the tester's source (None: not read)
    tester_call: Callable[[str, list[object], dict[str, object]], TesterCommon | None] | None = None
    config_rest: KeywordsRest = KeywordsRest.DEFAULT  # what a name config_keywords leaves out holds
    # a module-level function of the common files that a test calls with itself, by name
    module_function: Callable[[str], ast.FunctionDef | None] | None = None
    # what the APIs the test reaches do (the models' table); set by the decision floor
    handlers: Handlers | None = field(default=None, compare=False, repr=False)
    # answers kept for this test class (its facts live within one model's library recording, so a
    # kept answer's reads are already in the recording that asks again)
    kept: dict[Hashable, object] = field(default_factory=dict, compare=False, repr=False)
