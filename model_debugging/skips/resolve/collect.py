"""Which test classes pytest collects from a model's files, and what each test name resolves to.

A class is collected when it is a ``unittest.TestCase`` defined in one of the files and ``__test__``
is not false in its MRO (a ``__test__`` that is not a literal makes its tests undecided). A class
that is not a ``TestCase`` is collected as a plain pytest class when its name matches pytest's
``python_classes`` (``Test...`` by default) and no class of its MRO defines ``__init__`` or
``__new__``. In the
class, a test resolves to the first definition in the MRO; a name bound last by something other
than a ``def`` (``test_x = None``) shadows the test, which pytest then does not collect; ``del``
in a class body unbinds that class's own definition. A class is skipped as a whole by a skip
decorator or ``pytestmark`` on a class of its MRO, by its module's ``pytestmark``, or by a skip
its ``setUpClass`` / ``setUp`` always raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from model_debugging.skips.records.literals import NonLiteral
from model_debugging.skips.records.outcome import Outcome, Status
from model_debugging.skips.records.test_files import (
    RELATIVE_IMPORT,
    STAR,
    UNCONDITIONAL_REASON,
    ClassInfo,
    Method,
    NameSkip,
    ParsedFile,
    ParseError,
    Skip,
    SkipKind,
)
from model_debugging.skips.resolve.calls import method_skip, name_skips
from model_debugging.skips.resolve.classes import ClassRef, Resolver
from model_debugging.skips.resolve.library import Library
from model_debugging.skips.resolve.library_imports import library_import_doubt, library_import_failure
from model_debugging.skips.source.modules import absolute_module, module_name
from model_debugging.skips.source.pytest_settings import DEFAULT_PYTEST, PytestSettings

# Every model test class needs torch; listing it for every test of every model would drown the rest.
BASELINE_CONDITIONS = frozenset({"require_torch"})
# unittest runs setUpClass once before the class's tests and setUp before each: a skip there skips them
SETUP_METHODS = ("setUpClass", "setUp")


@dataclass(frozen=True)
class CollectedClass:
    """A collected test class of a model, with what it resolves every test name to."""

    ref: ClassRef
    file: str
    line: int
    linearization: tuple[ClassRef, ...]
    class_skip: tuple[ClassRef, Skip] | None  # skip decorator / pytestmark on the class, its MRO or module
    definitions: Mapping[str, tuple[ClassRef, Method]]
    applicable: frozenset[str]  # common tests defined by a class of the common files in the MRO
    ran: Outcome  # shared by every test this class runs without conditions
    setup_skip: tuple[ClassRef, Skip] | None = None  # a skip setUpClass / setUp always raises
    # why every test of the class is undecided (a non-literal __test__ or __unittest_skip__)
    undecided: str | None = None
    plain: bool = False  # a plain pytest class: setUp does not run, self.skipTest does not exist
    setup_name_skips: tuple[tuple[ClassRef, NameSkip], ...] = ()  # setUp skips only some tests by name
    # name -> the nearest definition of that name under ``parameterized.expand`` (whose cases stay
    # in the class even when a later definition rebinds the name)
    expanded: Mapping[str, tuple[ClassRef, Method]] = field(default_factory=dict)


Definitions = dict[str, tuple[ClassRef, Method]]


def _definitions(resolver: Resolver, mro: tuple[ClassRef, ...]) -> tuple[Definitions, Definitions]:
    """Name -> (defining class, method) as attribute lookup on the class finds them (shadowed names
    are absent), and as found among the definitions written under ``parameterized.expand``."""
    definitions: Definitions = {}
    expanded: Definitions = {}
    for base in reversed(mro):
        info = resolver.info(base)
        if info is None:
            continue
        unbound = set(info.shadowing) | set(info.deleted)
        for method in info.methods:
            if method.expansion is not None:
                expanded[method.name] = (base, method)
            if method.name not in unbound:
                definitions[method.name] = (base, method)
        for name in info.shadowing:
            definitions.pop(name, None)
    return definitions, expanded


def _class_skip(
    resolver: Resolver, ref: ClassRef, mro: tuple[ClassRef, ...], parsed: ParsedFile
) -> tuple[ClassRef, Skip] | str | None:
    """The skip of the whole class, or why it is undecided (``__unittest_skip__`` not a literal)."""
    for base in mro:
        info = resolver.info(base)
        if info is not None and info.skip is not None:
            return base, info.skip
        found, value = info.attribute("__unittest_skip__") if info is not None else (False, None)
        if found and isinstance(value, NonLiteral):
            return f"__unittest_skip__ = {value.code}"
        if found and value:  # what @unittest.skip sets on a class, written by hand
            why = resolver.class_attribute(mro, "__unittest_skip_why__")[0]
            reason = why if isinstance(why, str) and why else UNCONDITIONAL_REASON
            return base, Skip(SkipKind.CLASS_DECORATOR, reason, info.line)
    return (ref, parsed.module_skip) if parsed.module_skip is not None else None


def _not_collected(resolver: Resolver, mro: tuple[ClassRef, ...]) -> tuple[bool, str | None]:
    """``(True, None)`` when ``__test__`` is false in the MRO; ``(False, code)`` when it is not a literal."""
    value, owner = resolver.class_attribute(mro, "__test__")
    if owner is None:
        return False, None
    if isinstance(value, NonLiteral):
        return False, f"__test__ = {value.code}"
    return not value, None


def _conditions(resolver: Resolver, mro: tuple[ClassRef, ...], parsed: ParsedFile) -> tuple[str, ...]:
    infos: list[ClassInfo] = [info for info in map(resolver.info, mro) if info is not None]
    texts = [condition.text for info in infos for condition in info.conditions]
    texts += [condition.text for condition in parsed.module_conditions]
    return tuple(dict.fromkeys(text for text in texts if text not in BASELINE_CONDITIONS))


def _setup_skip(
    resolver: Resolver, collected: CollectedClass, conditions: list[str]
) -> tuple[ClassRef, Skip] | None:
    for name in SETUP_METHODS:
        if name not in collected.definitions:
            continue
        owner, method = collected.definitions[name]
        found = method_skip(resolver, collected, owner, method, conditions, set())
        if found is not None and found[1].kind is not SkipKind.NOOP_OVERRIDE:
            where, skip = found
            return where, Skip(SkipKind.SETUP, skip.reason, method.line)
    return None


def _setup_name_skips(resolver: Resolver, collected: CollectedClass) -> tuple[tuple[ClassRef, NameSkip], ...]:
    """The skips ``setUp`` takes for some test names only (unittest sets the name before ``setUp``)."""
    if "setUp" not in collected.definitions:
        return ()
    owner, method = collected.definitions["setUp"]
    return tuple(name_skips(resolver, collected, owner, method, set()))


def _module_classes(
    resolver: Resolver, parsed: ParsedFile, module: str
) -> Iterator[tuple[ClassRef, ClassInfo]]:
    """The classes bound at the module's top level: those it defines, then those it imports from
    another file of the checkout (``from ..cohere.test_modeling_cohere import CohereModelTest``):
    pytest collects an imported ``TestCase`` in the importing module too, and runs its tests there."""
    for info in parsed.classes:
        yield ClassRef(module, info.name), info
    seen = set()
    for item in parsed.imports:
        if item.name in (None, STAR) or parsed.class_named(item.local) is not None:
            continue
        ref = resolver.resolve(module, item.local)
        info = resolver.info(ref) if not ref.external and ref.module != module else None
        if info is not None and ref not in seen:
            seen.add(ref)
            yield ref, info


def _import_failure(
    resolver: Resolver, library: Library, module: str, seen: set[str], walks: ImportWalks | None = None
) -> ParseError | tuple[ClassRef, Skip] | None:
    """What importing ``module`` meets first: an error (pytest collects nothing from it), a skip of
    the whole module (with the module that skips), or None. Its imports of the checkout's modules
    run first and pass their failure on, then its imports of the library (a library module that
    cannot be imported: see ``resolve/library_imports.py``). ``walks``: for a walk of its own (``seen``
    empty), where the walks of the model's files are kept."""
    seen.add(module)
    parsed = resolver.modules.get(module)
    if parsed is None:
        return None
    first = _fails_before_its_imports(parsed)
    if first is not None:
        return first
    found = (
        _failing_import(resolver, library, parsed, seen)
        if walks is None
        else _walked(resolver, library, parsed, walks)
    )
    if found is not None:
        return found.failure
    if parsed.import_error is not None:
        return parsed.import_error
    return None if parsed.import_skip is None else (ClassRef(module, ""), parsed.import_skip)


def _fails_before_its_imports(parsed: ParsedFile) -> ParseError | None:
    """The file's own error met before its imports run: Python's SyntaxError, or a relative import
    that goes above its package (met at the import statement)."""
    if parsed.error is not None:
        return parsed.error
    if parsed.import_error is not None and parsed.import_error.message.startswith(RELATIVE_IMPORT):
        return parsed.import_error
    return None


@dataclass(frozen=True)
class _Failing:
    """An import of a file that fails or skips: the module it names, what it meets (see
    :func:`_import_failure`), and the line of the statement when it is known already."""

    imported: str
    failure: ParseError | tuple[ClassRef, Skip]
    line: int | None = None


def _failing_import(
    resolver: Resolver, library: Library, parsed: ParsedFile, seen: set[str]
) -> _Failing | None:
    """The first module of the checkout that ``parsed`` imports whose import fails or skips, else its
    first import of the library that fails; None when every one imports."""
    for imported in _imported_in_order(parsed):
        if imported not in seen and imported in resolver.modules:
            failure = _import_failure(resolver, library, imported, seen)
            if failure is not None:
                return _Failing(imported, failure)
    found = library_import_failure(library, parsed)
    return None if found is None else _Failing(found.imported, found.cause, found.line)


ImportWalks = dict[str, "_Failing | None"]  # a model's file -> what the walk of its imports met


def _walked(resolver: Resolver, library: Library, parsed: ParsedFile, walks: ImportWalks) -> _Failing | None:
    """:func:`_failing_import` of a file of the model with a walk of its own, once per file: the
    classes collected and the files that fail are found from the same walk."""
    if parsed.path not in walks:
        walks[parsed.path] = _failing_import(resolver, library, parsed, {module_name(parsed.path)})
    return walks[parsed.path]


@dataclass(frozen=True)
class FailedImport:
    """A file pytest cannot import because a file of the checkout it imports, directly or not, does
    not parse or cannot be imported (a test file, or a library module that imports a missing module
    or name), or because its own import names a library module or name that is missing:
    ``imported`` is the module its own import statement names (or runs: the library module defining
    the name it imports), ``cause`` the error of the file where the import fails (its own when
    ``cause.path`` is ``path``), ``line`` the line of its import statement when known (else it is
    looked for)."""

    path: str
    imported: str
    cause: ParseError
    line: int | None = None


def failed_imports(
    resolver: Resolver, library: Library, files: Iterable[str], walks: ImportWalks | None = None
) -> list[FailedImport]:
    """The files of ``files`` whose import fails in another file (pytest collects nothing from them,
    and reports a collection error for each); a file's own error is its record's already. ``walks``:
    those :func:`collect_test_classes` kept for the same files."""
    found = []
    for path in files:
        module = module_name(path)
        parsed = resolver.modules.get(module)
        if parsed is None or _fails_before_its_imports(parsed) is not None:
            continue
        failing = _walked(resolver, library, parsed, {} if walks is None else walks)
        if failing is not None and isinstance(failing.failure, ParseError):
            found.append(FailedImport(path, failing.imported, failing.failure, failing.line))
    return found


def _imported_in_order(parsed: ParsedFile) -> Iterator[str]:
    current, package = module_name(parsed.path), parsed.path.endswith("__init__.py")
    for item in parsed.imports:
        target = absolute_module(current, package, item.module, item.level)
        if item.name not in (None, STAR):
            yield f"{target}.{item.name}"  # a submodule imported by name
        yield target


def _plain_collected(
    resolver: Resolver, ref: ClassRef, mro: tuple[ClassRef, ...], pytest: PytestSettings
) -> tuple[bool, str | None]:
    """``(collected, why undecided)`` for a class that is not a ``TestCase``: pytest collects it when
    its name matches ``python_classes`` and nothing in its MRO defines ``__init__`` / ``__new__``."""
    if not pytest.collects_class(ref.name):
        return False, None
    for base in mro:
        info = resolver.info(base)
        if info is None and base.name not in ("object", "builtins.object"):
            return True, (
                f"{ref.name} is a plain pytest class whose base {base.name} is not read "
                "(pytest does not collect it when that base defines __init__)"
            )
        if info is not None and (info.method("__init__") or info.method("__new__")):
            return False, None
    return True, None


def collect_test_classes(
    resolver: Resolver,
    library: Library,
    files: Iterable[str],
    tests: Mapping[str, tuple[str, frozenset[ClassRef]]],
    pytest: PytestSettings = DEFAULT_PYTEST,
    walks: ImportWalks | None = None,
) -> list[CollectedClass]:
    """The test classes pytest collects from ``files``.

    ``tests`` maps each common test name to ``(origin, classes of the common files defining it)``;
    ``pytest`` holds the checkout's collection settings; ``library`` tells which library imports fail;
    ``walks`` keeps the walk of each file's imports for :func:`failed_imports`.
    """
    found = []
    walks = {} if walks is None else walks
    for path in files:
        parsed = resolver.modules.get(module_name(path))
        failure = (
            _import_failure(resolver, library, module_name(path), set(), walks)
            if parsed is not None
            else None
        )
        if parsed is None or isinstance(failure, ParseError):  # pytest collects nothing from the file
            continue
        doubt = library_import_doubt(library, parsed)  # its import may fail: every test is undecided
        for ref, info in _module_classes(resolver, parsed, module_name(path)):
            mro = resolver.mro(ref)
            plain = not resolver.is_test_case(mro)
            plain_undecided = None
            if plain:
                collected, plain_undecided = _plain_collected(resolver, ref, mro, pytest)
                if not collected:
                    continue
            not_collected, undecided = _not_collected(resolver, mro)
            undecided = undecided or plain_undecided or doubt
            if not_collected:
                continue
            class_skip = failure or _class_skip(resolver, ref, mro, parsed)  # the module skips first
            if isinstance(class_skip, str):
                class_skip, undecided = None, undecided or class_skip
            definitions, expanded = _definitions(resolver, mro)
            bases = set(mro)
            applicable = frozenset(
                name for name in definitions if name in tests and not bases.isdisjoint(tests[name][1])
            )
            conditions = list(_conditions(resolver, mro, parsed))
            ran = Outcome(Status.RAN, None, info.name, path, tuple(conditions))
            collected = CollectedClass(
                ref, path, info.line, mro, class_skip, definitions, applicable, ran,
                undecided=undecided, expanded=expanded, plain=plain,
            )  # fmt: skip
            # unittest runs setUp / setUpClass; pytest does not for a plain class
            setup_skip = None if plain else _setup_skip(resolver, collected, conditions)
            by_name = () if plain else _setup_name_skips(resolver, collected)
            conditions = list(dict.fromkeys(conditions))
            if setup_skip is not None or by_name or tuple(conditions) != ran.conditions:
                ran = Outcome(Status.RAN, None, info.name, path, tuple(conditions))
                collected = replace(collected, ran=ran, setup_skip=setup_skip, setup_name_skips=by_name)
            found.append(collected)
    return found
