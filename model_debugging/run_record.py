"""The file our pytest plugin writes (``pytest --observed_json PATH``) and ``scan --observed`` reads.

One JSON object::

    {"format": FORMAT,
     "ignores_skip_decorators": false,   # --observed_ignore_skips: a run to find stale skips
     "counts_assert_statements": true,   # pytest's assertion pass hook was on
     "items": [{"nodeid": "tests/models/x/test_modeling_x.py::XModelTest::test_y",
                "test": "test_y",          # the function the item runs (an expanded case's own test)
                "outcome": "passed",       # passed, failed, error, skipped, xfailed, xpassed
                "reason": "",              # the skip reason, or the first line of the failure
                "assertions": 3,           # assertions the test reached (passed items; null: not counted)
                "checks": true,            # whether the test function's body holds an assertion
                "skip_ignored": null,      # the reason of the skip decorator the run ignored
                "runs_overridden": false}]}  # it ran the definition a skipped no-op override overrides

It has no dependency beyond the standard library: the plugin imports it in every pytest run.
"""

FORMAT = "model-debugging observed run 1"
