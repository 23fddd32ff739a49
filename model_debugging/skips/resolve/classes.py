"""Resolve classes across files: imports, the MRO (C3), and the value of class flags.

A class is identified by a :class:`ClassRef`: ``(module, name)`` for a class parsed in the
repository, or ``(None, "dotted.name")`` for anything outside it (``unittest.TestCase``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from model_debugging.skips.records.literals import LiteralValue, NonLiteral
from model_debugging.skips.records.test_files import (
    STAR,
    BoolOp,
    ClassInfo,
    Equals,
    Flag,
    FlagExpression,
    Method,
    Not,
    ParsedFile,
)
from model_debugging.skips.resolve.mro import c3_linearization
from model_debugging.skips.source.modules import absolute_module

TEST_CASE_BASES = {"unittest.TestCase", "unittest.case.TestCase"}


class _Missing:
    """The type of :data:`_MISSING`: no class of the MRO sets the attribute."""


_MISSING = _Missing()


@dataclass(frozen=True)
class ClassRef:
    module: str | None
    name: str

    @property
    def external(self) -> bool:
        return self.module is None


class Resolver:
    """Looks up classes, linearizes them and evaluates flag expressions against their MRO."""

    def __init__(self, modules: Mapping[str, ParsedFile]):
        """``modules`` maps module names to records; it may load them lazily (see ``skips/parse/record_store.py``)."""
        self.modules = modules
        self._mro: dict[ClassRef, tuple[ClassRef, ...]] = {}
        self._infos: dict[ClassRef, ClassInfo | None] = {}

    # -- names -----------------------------------------------------------------------------------
    def _is_package(self, module: str) -> bool:
        parsed = self.modules.get(module)
        return parsed is not None and parsed.path.endswith("__init__.py")

    def info(self, ref: ClassRef) -> ClassInfo | None:
        if ref not in self._infos:
            parsed = self.modules.get(ref.module) if ref.module is not None else None
            self._infos[ref] = None if parsed is None else parsed.class_named(ref.name)
        return self._infos[ref]

    def function(self, module: str, name: str) -> tuple[ClassRef, Method] | None:
        """The function ``name`` written in ``module`` calls: defined there, or imported by name
        from another module of the checkout (its ref names the function in its module)."""
        parsed = self.modules.get(module)
        if parsed is None:
            return None
        found = parsed.function_named(name)
        if found is not None:
            return ClassRef(module, name), found
        for item in reversed(parsed.imports):
            if item.local == name and item.name not in (None, STAR):
                target = absolute_module(module, self._is_package(module), item.module, item.level)
                imported = self.modules.get(target)
                found = imported.function_named(item.name) if imported is not None else None
                return None if found is None else (ClassRef(target, item.name), found)
        return None

    def path_of(self, ref: ClassRef) -> str | None:
        parsed = self.modules.get(ref.module) if ref.module is not None else None
        return None if parsed is None else parsed.path

    def resolve(self, module: str, dotted: str, depth: int = 0) -> ClassRef:
        """What the name ``dotted`` written in ``module`` refers to."""
        parsed = self.modules.get(module)
        head, _, rest = dotted.partition(".")
        if parsed is None or depth > 20:
            return ClassRef(None, f"{module}.{dotted}" if parsed is None and module else dotted)
        if not rest and parsed.class_named(head) is not None:
            return ClassRef(module, head)
        for item in reversed(parsed.imports):
            if item.local != head:
                continue
            target = absolute_module(module, self._is_package(module), item.module, item.level)
            if item.name is None:  # import a.b as head / import head
                full = f"{item.module}.{rest}" if rest else item.module
                return self._resolve_dotted(full, depth)
            if f"{target}.{item.name}" in self.modules and rest:  # from package import submodule
                return self.resolve(f"{target}.{item.name}", rest, depth + 1)
            if target in self.modules:
                return self.resolve(target, f"{item.name}.{rest}" if rest else item.name, depth + 1)
            return ClassRef(None, f"{target}.{item.name}.{rest}" if rest else f"{target}.{item.name}")
        return self._from_star_imports(module, parsed, dotted, depth)

    def _from_star_imports(self, module: str, parsed: ParsedFile, dotted: str, depth: int) -> ClassRef:
        """``dotted`` looked up in the modules ``module`` star-imports, the last import first."""
        for item in reversed(parsed.imports):
            if item.name != STAR:
                continue
            target = absolute_module(module, self._is_package(module), item.module, item.level)
            if target in self.modules:
                found = self.resolve(target, dotted, depth + 1)
                if not found.external:
                    return found
        return ClassRef(None, dotted)

    def _resolve_dotted(self, full: str, depth: int) -> ClassRef:
        module, _, name = full.rpartition(".")
        if module in self.modules:
            return self.resolve(module, name, depth + 1)
        return ClassRef(None, full)

    # -- MRO -------------------------------------------------------------------------------------
    def mro(self, ref: ClassRef) -> tuple[ClassRef, ...]:
        """Its MRO (see :func:`~model_debugging.skips.resolve.mro.c3_linearization`)."""
        if ref in self._mro:
            return self._mro[ref]
        self._mro[ref] = (ref,)  # guards against cycles while computing
        info = self.info(ref)
        if info is None:
            return (ref,)
        bases = [self.resolve(ref.module, base) for base in info.bases]
        self._mro[ref] = c3_linearization(ref, [self.mro(base) for base in bases], bases)
        return self._mro[ref]

    def is_test_case(self, mro: tuple[ClassRef, ...]) -> bool:
        return any(ref.external and ref.name in TEST_CASE_BASES for ref in mro)

    # -- attributes ------------------------------------------------------------------------------
    def class_attribute(
        self, mro: tuple[ClassRef, ...], name: str
    ) -> tuple[LiteralValue | _Missing, ClassRef | None]:
        """The class-level value of ``name`` first found in ``mro`` (a method counts as non-literal)."""
        for ref in mro:
            info = self.info(ref)
            if info is None:
                continue
            found, value = info.attribute(name)
            if found:
                return value, ref
            if info.method(name) is not None:
                return NonLiteral(f"{ref.name}.{name}()"), ref
        return _MISSING, None

    def tester_class(self, mro: tuple[ClassRef, ...]) -> tuple[ClassRef | None, dict[str, LiteralValue]]:
        """The model tester that ``setUp`` creates, with the literal keywords it passes."""
        for ref in mro:
            info = self.info(ref)
            if info is None or info.method("setUp") is None:
                continue
            call = info.tester_call
            if call is None:
                return None, {}
            callee = call.callee
            owner = ref
            if callee.startswith("self."):
                value, owner = self.class_attribute(mro, callee[5:])
                if not isinstance(value, NonLiteral) or owner is None:
                    return None, {}
                callee = value.code
            return self.resolve(owner.module, callee), dict(call.keywords)
        return None, {}

    def tester_attribute(self, mro: tuple[ClassRef, ...], name: str) -> LiteralValue | _Missing:
        tester, keywords = self.tester_class(mro)
        if name in keywords:
            return keywords[name]
        if tester is None or tester.external:
            return NonLiteral(f"self.model_tester.{name}")
        tester_mro = self.mro(tester)
        # Instance attributes set by any __init__ shadow class attributes.
        for ref in tester_mro:
            info = self.info(ref)
            for key, value in info.init_defaults if info else ():
                if key == name:
                    return value
        value, _ = self.class_attribute(tester_mro, name)
        return value

    def flag_value(self, mro: tuple[ClassRef, ...], flag: Flag) -> LiteralValue:
        if len(flag.path) == 1:
            value, _ = self.class_attribute(mro, flag.path[0])
        elif len(flag.path) == 2 and flag.path[0] == "model_tester":
            value = self.tester_attribute(mro, flag.path[1])
        else:
            value = NonLiteral("self." + ".".join(flag.path))
        if value is _MISSING:
            return flag.default if flag.has_default else NonLiteral("self." + ".".join(flag.path))
        return value

    def evaluate(self, mro: tuple[ClassRef, ...], expression: FlagExpression | LiteralValue) -> bool | None:
        """Truth of a guard condition for the class with this MRO; None when it cannot be known."""
        if isinstance(expression, Flag):
            value = self.flag_value(mro, expression)
            return None if isinstance(value, NonLiteral) else bool(value)
        if isinstance(expression, Not):
            inner = self.evaluate(mro, expression.operand)
            return None if inner is None else not inner
        if isinstance(expression, BoolOp):
            values = [self.evaluate(mro, operand) for operand in expression.operands]
            decisive = expression.operator == "or"  # True decides an `or`, False an `and`
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        if isinstance(expression, Equals):
            if isinstance(expression.operand, Flag):
                value = self.flag_value(mro, expression.operand)
                if isinstance(value, NonLiteral):
                    return None
            else:
                value = self.evaluate(mro, expression.operand)
                if value is None:
                    return None
            return (value == expression.value) != expression.negated
        return None if isinstance(expression, NonLiteral) else bool(expression)
