"""What a run of configuration constructors knows (see ``constructor.py``): the
attributes set so far, the running frame's variables, and the ``**kwargs`` dictionaries, with the
join of what two branches know."""

from __future__ import annotations

from collections.abc import Callable

from model_debugging.skips.interp.join import agreed
from model_debugging.skips.interp.values import ABSENT, Unknown
from model_debugging.skips.records.literals import unevaluated


class ConfigSelf:
    """The type of :data:`SELF`; formatted into a string, it is a part only the run knows."""

    def __str__(self) -> str:
        return unevaluated("self")


SELF = ConfigSelf()  # the configuration being built, as a value
_PLAIN = (bool, int, float, str, bytes, type(None), tuple, list, dict)


class Stop(Exception):
    """The constructors cannot be run (a definition not found, calls too deep)."""


def known(value: object) -> bool:
    """A plain value whose every part is known (a list holding an unknown value is not)."""
    if isinstance(value, dict):
        return all(known(key) and known(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return all(known(item) for item in value)
    return isinstance(value, _PLAIN) and not isinstance(value, Unknown)


def holds(value: object, part: object) -> bool:
    """Whether ``value`` is ``part`` or holds it (the same object) among its items."""
    if value is part:
        return True
    if isinstance(value, dict):
        return any(holds(item, part) for item in value.values())
    return isinstance(value, (list, tuple)) and any(holds(item, part) for item in value)


def same(values: list[object]) -> bool:
    return known(values[0]) and agreed(values)


class Keywords:
    """The ``**kwargs`` of a frame: what was written in it, the names taken out of it, and the
    tester's keywords behind them (``passed(name)``: a value, :data:`ABSENT`, or an ``Unknown``).
    ``opaque``: what it holds is only known at run time."""

    def __init__(self, passed: Callable[[str], object], written=None, taken=(), opaque=False):
        self.passed, self.written, self.taken, self.opaque = passed, dict(written or {}), set(taken), opaque

    def __str__(self) -> str:
        return unevaluated("kwargs")

    def copy(self) -> Keywords:
        return Keywords(self.passed, self.written, self.taken, self.opaque)

    def merged(self, written: dict[str, object]) -> Keywords:
        """These keywords and ``written`` ones, as ``f(**kwargs, a=1)`` hands them on."""
        return Keywords(self.passed, {**self.written, **written}, self.taken - written.keys(), self.opaque)

    def look(self, name: str, take: bool = False) -> object:
        """The value of ``name`` (taken out with ``take``), or :data:`ABSENT`."""
        if name in self.written:
            return self.written.pop(name) if take else self.written[name]
        if self.opaque:
            return Unknown(f"kwargs[{name!r}]")
        if name in self.taken:
            return ABSENT
        if take:
            self.taken.add(name)
        return self.passed(name)

    def same_as(self, other: Keywords) -> bool:
        return (self.opaque, self.taken, self.written.keys()) == (
            other.opaque,
            other.taken,
            other.written.keys(),
        )


class Items:
    """``kwargs.items()``: iterated only by the loop that keeps the keywords as attributes."""

    def __init__(self, keywords: Keywords):
        self.keywords = keywords


class State:
    """The configuration's attributes (``rest``: keywords its base keeps as attributes; ``wild``:
    any attribute may have been written) and the running frame's variables."""

    def __init__(self, attributes=None, variables=None, wild=False, rest=None):
        self.attributes, self.variables = dict(attributes or {}), dict(variables or {})
        self.wild, self.rest = wild, rest

    def forget(self) -> None:
        """Anything may have been written (``setattr(self, <unknown name>, ...)``, ``self`` handed
        to a call not followed): what was set is unknown now; what is set later is known again."""
        self.attributes = {name: Unknown(f"config.{name}") for name in self.attributes}
        self.wild = True

    def changed(self, value: object) -> None:
        """``value`` (a list or dict) was changed in place by something not followed: every
        variable and attribute holding it is unknown now."""
        for part in (self.variables, self.attributes):
            for name, held in part.items():
                if holds(held, value):
                    part[name] = Unknown(name)

    def copy(self) -> State:
        variables = {name: _copied(value) for name, value in self.variables.items()}
        return State(self.attributes, variables, self.wild, self.rest.copy() if self.rest else None)


def _copied(value: object) -> object:
    return value.copy() if isinstance(value, (Keywords, dict, list)) else value


def joined(states: list[State]) -> State:
    """What is known after one of ``states``, whichever the run took."""
    if len(states) == 1:
        return states[0]
    after = State(wild=any(state.wild for state in states))
    for part in ("attributes", "variables"):
        for name in set().union(*(getattr(state, part).keys() for state in states)):
            values = [getattr(state, part).get(name, ABSENT) for state in states]
            if all(isinstance(value, Keywords) for value in values):
                alike = all(value.same_as(values[0]) for value in values)
                getattr(after, part)[name] = values[0] if alike else Keywords(values[0].passed, opaque=True)
            else:
                getattr(after, part)[name] = values[0] if same(values) or values[0] is SELF else Unknown(name)
    rests = [state.rest for state in states]
    if any(rest is not None for rest in rests):
        base = next(rest for rest in rests if rest is not None)
        alike = all(rest is not None and rest.same_as(base) for rest in rests)
        after.rest = base if alike else Keywords(base.passed, opaque=True)
    return after


# the states a statement may go on with, and those it returned in with their values
Flow = tuple[list[State], list[tuple[State, object]]]
