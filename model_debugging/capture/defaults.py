"""`@merge_with_config_defaults`: arguments the caller leaves as None take their value from the config."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable

from torch import nn

__all__ = ["merge_with_config_defaults"]

DEFAULT_NAMES = ("use_cache",)


def merge_with_config_defaults(func: Callable | None = None, *, names: Iterable[str] | None = None):
    """Decorate a ``forward`` so that each argument in ``names`` left as None takes ``self.config.<name>``.

    An explicit value always wins; a config without the attribute leaves the argument as it was.
    The argument is passed back where the caller put it (positionally or by keyword), or as a keyword
    when it was not passed and the forward has that parameter or ``**kwargs``. ``use_cache`` is forced
    to False, with a warning, while training a model whose ``gradient_checkpointing`` is on.

    Args:
        names (`Iterable[str]`, *optional*, defaults to `("use_cache",)`):
            The arguments to resolve. Names given explicitly must be receivable by the forward
            (a parameter or ``**kwargs``), otherwise decoration raises `TypeError`.

    Example:
        ```python
        @merge_with_config_defaults
        @capture_outputs
        def forward(self, input_ids, use_cache=None, **kwargs): ...

        @merge_with_config_defaults(names=("use_cache", "vision_feature_layer"))
        def forward(self, pixel_values, vision_feature_layer=None, **kwargs): ...
        ```
    """
    explicit = names is not None
    resolved_names = tuple(names) if explicit else DEFAULT_NAMES

    def decorate(forward: Callable) -> Callable:
        positions = _argument_positions(forward, resolved_names, strict=explicit)

        @functools.wraps(forward)
        def wrapper(self: nn.Module, *args, **kwargs):
            config = getattr(self, "config", None)
            for name, position in positions.items():
                passed_positionally = position is not None and position < len(args)
                passed = args[position] if passed_positionally else kwargs.get(name)
                value = passed if passed is not None else getattr(config, name, None)
                if name == "use_cache":
                    value = _without_cache_under_checkpointing(self, value)
                if value is None or value is passed:
                    continue
                if passed_positionally:
                    args = (*args[:position], value, *args[position + 1 :])
                else:
                    kwargs[name] = value
            return forward(self, *args, **kwargs)

        return wrapper

    return decorate if func is None else decorate(func)


def _argument_positions(forward: Callable, names: tuple[str, ...], strict: bool) -> dict[str, int | None]:
    """For each name the forward can receive, its index in ``*args`` after self (None: keyword only)."""
    parameters = list(inspect.signature(forward).parameters.values())
    takes_var_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    positional = [
        p.name
        for p in parameters[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    keyword_only = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    positions = {}
    for name in names:
        if name in positional:
            positions[name] = positional.index(name)
        elif name in keyword_only or takes_var_kwargs:
            positions[name] = None
        elif strict:
            raise TypeError(
                f"merge_with_config_defaults: {forward.__qualname__}() cannot receive {name!r} "
                "(no such parameter and no **kwargs)"
            )
    return positions


def _without_cache_under_checkpointing(model: nn.Module, use_cache):
    if use_cache and model.training and getattr(model, "gradient_checkpointing", False):
        warnings.warn(
            f"{type(model).__name__}: use_cache=True is incompatible with gradient checkpointing while "
            "training; using use_cache=False",
            stacklevel=3,
        )
        return False
    return use_cache
