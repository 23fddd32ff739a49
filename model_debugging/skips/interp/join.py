"""After a branch only the run decides, the variables of the paths that go on are merged into one.

A value the paths agree on stays; a configuration they set differently keeps its class (a value
they disagree on becomes unknown); a dict they changed differently keeps its keys; anything else
they disagree on is unknown.
"""

from __future__ import annotations

from model_debugging.skips.interp.values import Config, Unknown

_UNSET = object()  # a variable, or a configuration value, one branch did not set


def agreed(values: list[object]) -> bool:
    """Whether the paths left one value: equal and of one type (``1`` and ``True`` are equal, but a
    later ``is True`` or ``isinstance`` tells them apart)."""
    first = values[0]
    return all(type(value) is type(first) and value == first for value in values[1:])


def merge_branches(variables: dict[str, object], scopes: list[dict[str, object]]) -> None:
    """After a fork, a variable the branches left with different values is unknown."""
    if not scopes:
        return
    names = {name for scope in scopes for name in scope}
    first_scope, others = scopes[0], scopes[1:]
    for name in names:
        first = first_scope.get(name, _UNSET)
        # most variables are the very object the fork started with in every branch
        if first is not _UNSET and all(scope.get(name, _UNSET) is first for scope in others):
            variables[name] = first
            continue
        values = [scope[name] if name in scope else Unknown(name) for scope in scopes]
        first = values[0]
        if agreed(values):
            variables[name] = first
        elif all(isinstance(value, Config) and value.info is first.info for value in values):
            variables[name] = _merged_config(values)
        elif all(isinstance(value, dict) and value.keys() == first.keys() for value in values):
            variables[name] = {  # the same keys: a value the branches set differently is unknown
                key: first[key] if agreed([value[key] for value in values]) else Unknown(str(key))
                for key in first
            }
        else:
            variables[name] = Unknown(name)


def _merged_config(configs: list[Config]) -> Config:
    """One configuration the branches set differently: a value they disagree on is unknown, the
    rest (its class, what they all set alike) stays known."""
    names = dict.fromkeys(key for config in configs for key, _ in config.overrides)
    merged = configs[0]
    for key in names:
        values = [dict(config.overrides).get(key, _UNSET) for config in configs]
        same = values[0] is not _UNSET and agreed(values)
        merged = merged.with_value(key, values[0] if same else Unknown(key))
    return merged
