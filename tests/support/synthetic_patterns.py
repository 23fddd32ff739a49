"""The skip patterns a generated checkout can write into a test class, with the outcome each gives."""

from __future__ import annotations

# pattern -> (lines of the override with {test} and {r} (the reason's literal / words), outcome).
# Outcome: ("skipped", kind), ("ran", condition text or None) or ("inherited", None) when the common
# definition decides. A "{helper}" line is a method the override calls; its skip is the override's.
PATTERNS: dict[str, tuple[tuple[str, ...], tuple[str, str | None]]] = {
    "inherit": ((), ("inherited", None)),
    "runs": (("def {test}(self):", "    self.assertTrue(True)"), ("ran", None)),
    "super_call": (("def {test}(self):", "    super().{test}()"), ("inherited", None)),
    "skip_reason": (
        ("@unittest.skip(reason={r})", "def {test}(self):", "    pass"),
        ("skipped", "decorator"),
    ),
    "skip_positional": (("@unittest.skip({r})", "def {test}(self):", "    run()"), ("skipped", "decorator")),
    "pytest_skip_mark": (
        ("@pytest.mark.skip(reason={r})", "def {test}(self):", "    run()"),
        ("skipped", "decorator"),
    ),
    "alias_skip": (("@skip_alias({r})", "def {test}(self):", "    run()"), ("skipped", "decorator")),
    "skipif_true": (
        ("@unittest.skipIf(True, {r})", "def {test}(self):", "    run()"),
        ("skipped", "decorator"),
    ),
    "skipunless_false": (
        ("@unittest.skipUnless(False, {r})", "def {test}(self):", "    run()"),
        ("skipped", "decorator"),
    ),
    "skiptest_call": (
        ("def {test}(self):", "    self.skipTest(reason={r})", "    run()"),
        ("skipped", "body"),
    ),
    "pytest_skip_call": (("def {test}(self):", "    pytest.skip({r})"), ("skipped", "body")),
    "raise_skiptest": (("def {test}(self):", "    raise unittest.SkipTest({r})"), ("skipped", "body")),
    "helper_skip": (
        (
            "def {test}(self):",
            "    self._helper_{test}()",
            "{helper}",
            "def _helper_{test}(self):",
            "    self.skipTest({r})",
        ),
        ("skipped", "body"),
    ),
    "noop_docstring": (("def {test}(self):", '    """{r}"""'), ("skipped", "noop_override")),
    "noop_comment": (("def {test}(self):", "    pass  # {r}"), ("skipped", "noop_override")),
    "noop_comment_above": (("# {r}", "def {test}(self):", "    return"), ("skipped", "noop_override")),
    "skipif_false": (("@unittest.skipIf(False, {r})", "def {test}(self):", "    run()"), ("ran", None)),
    "runtime_skipif": (
        ('@unittest.skipIf(os.environ.get("NO_GPU"), {r})', "def {test}(self):", "    run()"),
        ("ran", 'unittest.skipIf(os.environ.get("NO_GPU"), {r})'),
    ),
    "require_gpu": (("@require_torch_gpu", "def {test}(self):", "    run()"), ("ran", "require_torch_gpu")),
    "runtime_guard": (
        ("def {test}(self):", '    if os.environ.get("CI"):', "        self.skipTest({r})", "    run()"),
        ("ran", 'if os.environ.get("CI"): skip'),
    ),
    "skip_in_loop": (
        ("def {test}(self):", "    for _ in range(1):", "        self.skipTest({r})"),
        ("ran", None),
    ),
    "skip_after_return": (("def {test}(self):", "    return", "    self.skipTest({r})"), ("ran", None)),
    # pytest does not collect a test whose name the class binds to a non-function
    "shadow_none": (("{test} = None",), ("not_collected", None)),
    "shadow_false": (("{test} = False",), ("not_collected", None)),
    # the class's own (skipped) definition is deleted again: the inherited one runs
    "deleted_own": (
        ("@unittest.skip({r})", "def {test}(self):", "    pass", "del {test}"),
        ("inherited", None),
    ),
}
# Patterns whose reason is written as words (a docstring or a comment) rather than a string literal.
WORD_PATTERNS = frozenset({"noop_docstring", "noop_comment", "noop_comment_above"})
