"""Generated transformers-style checkouts whose scan result is known from how they were generated.

A :class:`CheckoutSpec` says, for every model test class, which skip pattern overrides which common
test; :func:`write_checkout` renders it as real test modules and :func:`expected_results` computes
the scanner's answer from the spec alone (same entries, reasons, kinds, files and lines). The
robustness tests draw specs with hypothesis; ``benchmarks/bench_scanner_scale.py`` draws them with
:func:`random_checkout` to build checkouts of any size.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from model_debugging.skips.results.provenance import this_analyzer
from model_debugging.skips.source.settings import DEFAULT_SETTINGS
from tests.support.synthetic_patterns import PATTERNS, WORD_PATTERNS

__all__ = ["PATTERNS", "WORD_PATTERNS", "CheckoutSpec", "ClassSpec", "ModelSpec", "Override"]

COMMON_FILE = "tests/test_modeling_common.py"
GENERATION_FILE = "tests/generation/test_utils.py"
# Common tests guarded by a class flag: test name -> (flag the spec sets, reason written in the guard).
GUARDED = {
    "test_attention_outputs": ("has_attentions", "Model does not output attentions"),
    "test_training": ("is_training", "ModelTester is not configured to run training tests"),
}

MODEL_HEADER = """\
import os
import unittest
from unittest import skip as skip_alias

import pytest
from transformers.testing_utils import require_torch_gpu, slow

from ...generation.test_utils import GenerationTesterMixin
from ...test_modeling_common import ModelTesterMixin


def run():
    pass


class {tester}:
    def __init__(self, parent, is_training=True):
        self.parent = parent
        self.is_training = is_training
"""


@dataclass(frozen=True)
class Override:
    pattern: str  # a key of PATTERNS
    reason: str = ""  # any text; only words (letters, digits, single spaces) for WORD_PATTERNS


@dataclass(frozen=True)
class ClassSpec:
    """One test class of a model: its mixins, flags, decorators and overrides of common tests."""

    overrides: tuple[tuple[str, Override], ...] = ()
    generation: bool = False
    has_attentions: bool | None = None  # None: inherit the mixin's True
    is_training: bool | None = None  # None: the tester's default True
    class_skip: str | None = None  # the reason of a @unittest.skip on the class
    slow: bool = False  # @slow on the class: a condition of every test it runs
    class_mark: str | None = None  # the reason of `pytestmark = pytest.mark.skip(...)` in the class body
    setup_skip: str | None = None  # the reason of a `self.skipTest` at the top of setUp
    hidden: bool = False  # `__test__ = False`: pytest does not collect the class


@dataclass(frozen=True)
class ModelSpec:
    name: str  # a folder name under tests/models
    classes: tuple[ClassSpec, ...]
    integration_tests: int = 0  # methods of a plain unittest.TestCase class (never counted)
    module_mark: str | None = None  # the reason of a module-level `pytestmark = [pytest.mark.skip(...)]`


@dataclass(frozen=True)
class CheckoutSpec:
    models: tuple[ModelSpec, ...]
    common_tests: int = 3  # plain test_common_<i>, besides the GUARDED ones
    generation_tests: int = 2  # test_generate_<i> of GenerationTesterMixin


def common_test_names(spec: CheckoutSpec) -> list[str]:
    return [*GUARDED, *(f"test_common_{index}" for index in range(spec.common_tests))]


def generation_test_names(spec: CheckoutSpec) -> list[str]:
    return [f"test_generate_{index}" for index in range(spec.generation_tests)]


def model_file(name: str) -> str:
    return f"tests/models/{name}/test_modeling_{name}.py"


class _Writer:
    """Lines of one file, with the line number of every ``def``/``class`` written into it."""

    def __init__(self, text: str = ""):
        self.lines = text.splitlines()

    def add(self, *lines: str, indent: str = "") -> int:
        """Append ``lines``; return the line number of the first ``def``/``class`` among them."""
        first = 0
        for line in lines:
            self.lines.append(indent + line if line else "")
            if not first and line.lstrip().startswith(("def ", "class ")):
                first = len(self.lines)
        return first

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _render_common(spec: CheckoutSpec) -> tuple[str, dict[str, int]]:
    writer = _Writer("class ModelTesterMixin:\n    model_tester = None\n    has_attentions = True")
    lines = {}
    for test in common_test_names(spec):
        writer.add("")
        if test in GUARDED:
            flag, reason = GUARDED[test]
            owner = "self.model_tester" if flag == "is_training" else "self"
            body = (f"    if not {owner}.{flag}:", f"        self.skipTest(reason={reason!r})")
        else:
            body = ()
        lines[test] = writer.add(f"def {test}(self):", *body, "    self.assertTrue(True)", indent="    ")
    return writer.text(), lines


def _render_generation(spec: CheckoutSpec) -> str:
    writer = _Writer("class GenerationTesterMixin:\n    main_input_name = None")
    for test in generation_test_names(spec):
        writer.add("", f"def {test}(self):", "    self.assertTrue(True)", indent="    ")
    return writer.text()


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def class_name(model: ModelSpec, index: int) -> str:
    return f"{_camel(model.name)}{'' if index == 0 else index}ModelTest"


def _reason_literal(override: Override) -> str:
    return override.reason if override.pattern in WORD_PATTERNS else repr(override.reason)


def _render_model(model: ModelSpec) -> tuple[str, list[dict[str, Any]]]:
    """The module's text, and per class: its line and the line each override's skip is reported at."""
    tester = f"{_camel(model.name)}ModelTester"
    writer = _Writer(MODEL_HEADER.format(tester=tester))
    if model.module_mark is not None:
        writer.add("", f"pytestmark = [pytest.mark.skip(reason={model.module_mark!r})]")
    layout = []
    for index, spec in enumerate(model.classes):
        writer.add("", "")
        if spec.class_skip is not None:
            writer.add(f"@unittest.skip(reason={spec.class_skip!r})")
        if spec.slow:
            writer.add("@slow")
        bases = ", ".join(
            ["ModelTesterMixin", *(["GenerationTesterMixin"] if spec.generation else []), "unittest.TestCase"]
        )
        class_line = writer.add(f"class {class_name(model, index)}({bases}):")
        if spec.has_attentions is not None:
            writer.add(f"has_attentions = {spec.has_attentions}", indent="    ")
        if spec.hidden:
            writer.add("__test__ = False", indent="    ")
        if spec.class_mark is not None:
            writer.add(f"pytestmark = pytest.mark.skip(reason={spec.class_mark!r})", indent="    ")
        keyword = "" if spec.is_training is None else f", is_training={spec.is_training}"
        skip_first = () if spec.setup_skip is None else (f"    self.skipTest({spec.setup_skip!r})",)
        setup_line = writer.add(
            "",
            "def setUp(self):",
            *skip_first,
            f"    self.model_tester = {tester}(self{keyword})",
            indent="    ",
        )
        writer.add("", "def test_model_specific(self):", "    run()", indent="    ")
        skip_lines = {}
        for test, override in spec.overrides:
            template = PATTERNS[override.pattern][0]
            if not template:
                continue
            filled = [line.format(test=test, r=_reason_literal(override), helper="") for line in template]
            if "{helper}" in template:
                split = template.index("{helper}")
                writer.add("", *filled[:split], indent="    ")
                skip_lines[test] = writer.add("", *filled[split + 1 :], indent="    ")
            else:
                skip_lines[test] = writer.add("", *filled, indent="    ")
        layout.append({"line": class_line, "setup_line": setup_line, "skip_lines": skip_lines})
    if model.integration_tests:
        writer.add("", "", f"class {_camel(model.name)}IntegrationTest(unittest.TestCase):")
        for index in range(model.integration_tests):
            writer.add(
                "", f"def test_integration_{index}(self):", '    self.skipTest("not counted")', indent="    "
            )
    return writer.text(), layout


def render_model(model: ModelSpec) -> str:
    """The text of the test module of ``model``."""
    return _render_model(model)[0]


def write_checkout(spec: CheckoutSpec, root: str | Path) -> Path:
    """Write the checkout ``spec`` describes under ``root`` (created if missing) and return ``root``."""
    root = Path(root)
    files = {COMMON_FILE: _render_common(spec)[0], GENERATION_FILE: _render_generation(spec)}
    for model in spec.models:
        files[model_file(model.name)] = _render_model(model)[0]
    for folder in {PurePosixPath(relative).parent for relative in files}:  # packages, as in a checkout
        while folder.parts:
            files.setdefault(f"{folder}/__init__.py", "")
            folder = folder.parent
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _class_outcome(
    spec: CheckoutSpec, model: ModelSpec, index: int, layout: dict, test: str, common_lines: dict[str, int]
) -> dict[str, Any] | None:
    """``{"status", "skip", "conditions"}`` for one class, or None when the test does not apply to it."""
    cls = model.classes[index]
    override = dict(cls.overrides).get(test, Override("inherit"))
    status, detail = PATTERNS[override.pattern][1]
    if (test not in common_lines and not cls.generation) or cls.hidden or status == "not_collected":
        return None
    skip = None
    conditions = ["slow"] if cls.slow else []
    here = {"test_class": class_name(model, index), "file": model_file(model.name)}
    # what skips the whole class, in the analyzer's order: a decorator, the class's pytestmark, the module's
    for reason, kind, line in (
        (cls.class_skip, "class_decorator", layout["line"]),
        (cls.class_mark, "pytestmark", layout["line"]),
        (model.module_mark, "pytestmark", 1),
    ):
        if reason is not None:
            skip = {"reason": reason, "kind": kind, **here, "line": line}
            return {"status": "skipped", "skip": skip, "conditions": []}
    if cls.setup_skip is not None and detail != "decorator":  # a test's skip decorator is seen first
        skip = {"reason": cls.setup_skip, "kind": "setup", **here, "line": layout["setup_line"]}
        return {"status": "skipped", "skip": skip, "conditions": []}
    if status == "skipped":
        reason = override.reason
        if override.pattern in WORD_PATTERNS:
            reason = " ".join(reason.split())
        skip = {"reason": reason, "kind": detail, **here, "line": layout["skip_lines"][test]}
    elif status == "ran" and detail is not None:
        conditions.append(detail.format(r=_reason_literal(override)))
    elif status == "inherited" and test in GUARDED:
        flag, reason = GUARDED[test]
        value = cls.has_attentions if flag == "has_attentions" else cls.is_training
        if value is False:
            skip = {
                "reason": reason,
                "kind": "flag_guard",
                **here,
                "file": COMMON_FILE,
                "line": common_lines[test],
            }
    if skip is not None:
        return {"status": "skipped", "skip": skip, "conditions": []}
    return {"status": "ran", "skip": None, "conditions": conditions}


def expected_results(spec: CheckoutSpec) -> dict[str, dict[str, Any]]:
    """What ``scan_repository(...).to_json()`` must return for the checkout ``spec`` describes."""
    common_lines = _render_common(spec)[1]
    layouts = {model.name: _render_model(model)[1] for model in spec.models}
    tests = [(test, "common") for test in common_test_names(spec)]
    tests += [(test, "GenerationMixin") for test in generation_test_names(spec)]
    results = {}
    for test, origin in tests:
        ran, skips, not_applicable, conditions, classes = [], [], [], set(), []
        for model in spec.models:
            named = [
                (
                    class_name(model, index),
                    _class_outcome(spec, model, index, layouts[model.name][index], test, common_lines),
                )
                for index in range(len(model.classes))
            ]
            named = [(name, outcome) for name, outcome in named if outcome is not None]
            if len(named) > 1 and any(outcome["status"] != "ran" for _, outcome in named):
                # the verdict of each class, beside the model's, unless they all run the test
                for name, outcome in named:
                    skip = {key: value for key, value in (outcome["skip"] or {}).items()}
                    classes.append(
                        {
                            "model": model.name,
                            "test_class": name,
                            "class_file": model_file(model.name),
                            "status": outcome["status"],
                            **skip,
                        }
                    )
            outcomes = [outcome for _, outcome in named]
            ran_outcomes = [outcome for outcome in outcomes if outcome["status"] == "ran"]
            if not outcomes:
                not_applicable.append(model.name)
            elif ran_outcomes:
                ran.append(model.name)
                conditions |= {
                    f"{model.name}: {text}" for outcome in ran_outcomes for text in outcome["conditions"]
                }
            else:
                skips.append({"model": model.name, **outcomes[0]["skip"]})
        skips.sort(key=lambda entry: entry["model"])
        applicable = len(ran) + len(skips)
        results[test] = {
            "origin": origin,
            "models_ran": sorted(ran),
            "models_skipped": [entry["model"] for entry in skips],
            "skipped_proportion": round(len(skips) / applicable, 4) if applicable else 0.0,
            "reasons_skipped": sorted(f"{entry['model']}: {entry['reason']}" for entry in skips),
            "models_not_applicable": sorted(not_applicable),
            "models_undecided": [],
            "skips": skips,
            "conditions": sorted(conditions),
            "classes": sorted(classes, key=lambda entry: (entry["model"], entry["test_class"])),
            # this analyzer, its built-in settings; a generated checkout is no git repository: no commit
            "provenance": this_analyzer(DEFAULT_SETTINGS, None).to_json(),
        }
    return results


def random_checkout(
    rng: random.Random,
    models: int,
    *,
    common_tests: int = 40,
    generation_tests: int = 10,
    integration_tests: int = 4,
) -> CheckoutSpec:
    """A checkout of ``models`` models, each test class overriding about a fifth of the common tests."""
    tests = [*GUARDED, *(f"test_common_{index}" for index in range(common_tests))]
    tests += [f"test_generate_{index}" for index in range(generation_tests)]
    patterns = sorted(PATTERNS)
    specs = []
    for index in range(models):
        classes = []
        for _ in range(1 if rng.random() < 0.8 else 2):
            chosen = rng.sample(tests, k=len(tests) // 5)
            overrides = []
            for test in chosen:
                pattern = rng.choice(patterns)
                reason = " ".join(rng.choice(("not", "supported", "flaky", "model", "GPU")) for _ in range(3))
                overrides.append((test, Override(pattern, reason)))
            classes.append(
                ClassSpec(
                    overrides=tuple(overrides),
                    generation=rng.random() < 0.6,
                    has_attentions=rng.choice((None, True, False)),
                    is_training=rng.choice((None, True, False)),
                    class_skip="whole class skipped" if rng.random() < 0.02 else None,
                    slow=rng.random() < 0.1,
                    class_mark="class marked" if rng.random() < 0.02 else None,
                    setup_skip="setUp skips" if rng.random() < 0.02 else None,
                    hidden=rng.random() < 0.02,
                )
            )
        module_mark = "module marked" if rng.random() < 0.02 else None
        specs.append(ModelSpec(f"model_{index:05d}", tuple(classes), integration_tests, module_mark))
    return CheckoutSpec(tuple(specs), common_tests, generation_tests)
