"""The one C3 linearization agrees with Python's own ``__mro__``."""

from model_debugging.skips.resolve.mro import c3_linearization


def _linearized(cls: type) -> tuple[str, ...]:
    bases = [base for base in cls.__bases__ if base is not object]
    orders = [_linearized(base) for base in bases]
    return c3_linearization(cls.__name__, orders, [base.__name__ for base in bases])


def _python(cls: type) -> tuple[str, ...]:
    return tuple(item.__name__ for item in cls.__mro__ if item is not object)


def test_diamonds_and_mixins_linearize_as_python_does():
    class A: ...

    class B(A): ...

    class C(A): ...

    class D(B, C): ...

    class Mixin: ...

    class E(Mixin, D): ...

    class F(E, C): ...

    for cls in (D, E, F):
        assert _linearized(cls) == _python(cls)


def test_an_order_python_refuses_keeps_each_class_once_depth_first():
    # class X(B, A) with A(B): Python raises TypeError; the analyzer reads on
    assert c3_linearization("X", [("B",), ("A", "B")], ["B", "A"]) == ("X", "B", "A")
    assert c3_linearization("Y", [("P", "Q"), ("Q", "P")], ["P", "Q"]) == ("Y", "P", "Q")
