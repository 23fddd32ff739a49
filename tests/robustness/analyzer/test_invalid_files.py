"""Invalid files never crash a scan: each ends up in ``errors`` with its path and a line, the rest is intact."""

import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from model_debugging.skips.parse import test_file as parse
from tests.support import synthetic
from tests.support.scanning import scan_json

EXAMPLES = 40
SCRIPT = Path(__file__).resolve().parents[3] / "utils" / "scan_skipped_tests.py"
GOOD = synthetic.CheckoutSpec(
    (
        synthetic.ModelSpec(
            "good", (synthetic.ClassSpec(((("test_common_0"), synthetic.Override("noop_comment", "no")),)),)
        ),
    ),
    common_tests=1,
    generation_tests=1,
)
OPENERS = ("(", "[", "{", "-", "not ", "lambda: ", "f(")


def _deep_nesting(depth: int, opener: str) -> bytes:
    closer = {"(": ")", "[": "]", "{": "}", "f(": ")"}.get(opener, "")
    return f"x = {opener * depth}1{closer * depth}\n".encode()


def _valid_module() -> bytes:
    return synthetic.render_model(GOOD.models[0]).encode()


@st.composite
def invalid_files(draw):
    """(kind, content) of a file that is not a valid UTF-8 Python module (or is beyond the limits)."""
    kind = draw(st.sampled_from(["truncated", "binary", "not_utf8", "deep", "huge"]))
    module = _valid_module()
    if kind == "truncated":
        content = module[: draw(st.integers(1, len(module) - 1))]
    elif kind == "binary":
        content = draw(st.binary(min_size=1, max_size=2_000))
    elif kind == "not_utf8":
        at = draw(st.integers(0, len(module)))
        content = (
            module[:at] + draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3(", b"\xed\xa0\x80"])) + module[at:]
        )
    elif kind == "deep":  # under the size limit, far beyond any parser's nesting limit
        content = _deep_nesting(draw(st.integers(3_000, 200_000)), draw(st.sampled_from(OPENERS)))
    else:  # 5 MB of nesting: over the size limit
        content = _deep_nesting(5_000_000 // 2, draw(st.sampled_from(["(", "["])))
    return kind, content


def _python_rejects(content: bytes) -> bool:
    try:
        compile(content, "x.py", "exec", flags=ast.PyCF_ONLY_AST)  # the bytes, as an import reads them
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return len(content) > parse.MAX_FILE_BYTES


def _restrict(results: dict, models: set[str]) -> dict:
    """``results`` as if only ``models`` existed (the generated spec knows nothing of the bad files)."""
    restricted = {}
    for name, entry in results.items():
        entry = dict(entry)
        for key in ("models_ran", "models_skipped", "models_not_applicable"):
            entry[key] = [model for model in entry[key] if model in models]
        entry["skips"] = [skip for skip in entry["skips"] if skip["model"] in models]
        entry["reasons_skipped"] = [text for text in entry["reasons_skipped"] if text.split(":")[0] in models]
        entry["conditions"] = [text for text in entry["conditions"] if text.split(":")[0] in models]
        applicable = len(entry["models_ran"]) + len(entry["models_skipped"])
        entry["skipped_proportion"] = (
            round(len(entry["models_skipped"]) / applicable, 4) if applicable else 0.0
        )
        restricted[name] = entry
    return restricted


@settings(settings.get_profile("analyzer-robustness"), max_examples=EXAMPLES)
@given(bad=st.lists(invalid_files(), min_size=1, max_size=3))
def test_invalid_files_become_errors_with_path_and_line(bad):
    with tempfile.TemporaryDirectory() as root:
        synthetic.write_checkout(GOOD, root)
        written = {}
        for index, (_, content) in enumerate(bad):
            path = synthetic.model_file(f"bad{index}")
            (Path(root) / path).parent.mkdir(parents=True)
            (Path(root) / path).write_bytes(content)
            written[path] = content
        results, errors = scan_json(root, use_cache=False, jobs=1)
    by_path = {error["path"]: error for error in errors}
    assert set(by_path) <= set(written)
    for path, content in written.items():
        if _python_rejects(content):
            assert path in by_path, f"{path} ({len(content)} bytes) was not reported"
        if path in by_path:
            error = by_path[path]
            assert isinstance(error["line"], int) and 1 <= error["line"] <= content.count(b"\n") + 1
            assert error["message"]
    assert _restrict(results, {"good"}) == synthetic.expected_results(GOOD)


def test_a_byte_python_cannot_decode_is_reported_with_pythons_message():
    module = _valid_module()
    at = module.index(b"class ")
    content = module[:at] + b'NAME = "caf\xe9"\n' + module[at:]
    with tempfile.TemporaryDirectory() as root:
        synthetic.write_checkout(GOOD, root)
        (Path(root) / synthetic.model_file("good")).write_bytes(content)
        _, errors = scan_json(root, use_cache=False, jobs=1)
    assert errors == [
        {
            "path": synthetic.model_file("good"),
            "line": content[:at].count(b"\n") + 1,
            "message": "cannot decode: (unicode error) 'utf-8' codec can't decode byte 0xe9 in position 3: "
            "unexpected end of data",
        }
    ]


def test_a_bad_byte_in_a_comment_is_read_as_python_reads_it():
    # Python decodes tokens: an undecodable byte in a comment does not stop the import, nor the scan
    content = _valid_module() + b"# caf\xe9\n"  # at the end: the lines of the skips stay as generated
    with tempfile.TemporaryDirectory() as root:
        synthetic.write_checkout(GOOD, root)
        (Path(root) / synthetic.model_file("good")).write_bytes(content)
        results, errors = scan_json(root, use_cache=False, jobs=1)
    assert errors == [] and results == synthetic.expected_results(GOOD)


def test_the_command_survives_every_kind_of_bad_file_in_parallel_workers(tmp_path):
    """Worker processes parse the bad files: none of them may take the run down (exit 0, errors listed)."""
    synthetic.write_checkout(GOOD, tmp_path / "repo")
    bad = {
        "truncated": _valid_module()[: _valid_module().index(b"(ModelTesterMixin") + 5],
        "binary": bytes(range(256)) * 4,
        "not_utf8": b"x = '\xff'\n",
        "deep_parens": _deep_nesting(100_000, "("),
        "deep_minus": _deep_nesting(100_000, "-"),
        "deep_lambda": _deep_nesting(50_000, "lambda: "),
        "huge": _deep_nesting(2_500_000, "["),
        "empty_class": b"class A(:\n",
    }
    for name, content in bad.items():
        path = tmp_path / "repo" / synthetic.model_file(name)
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
    command = [sys.executable, str(SCRIPT), "--repo", str(tmp_path / "repo"), "--output_dir", str(tmp_path)]
    done = subprocess.run(
        [*command, "--no_cache", "--jobs", "2"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr

    errors = json.loads((tmp_path / "all_tests_scan_errors.json").read_text())
    assert sorted(error["path"] for error in errors) == sorted(synthetic.model_file(name) for name in bad)
    result = json.loads((tmp_path / "all_tests_scan_result.json").read_text())
    assert _restrict(result, {"good"}) == synthetic.expected_results(GOOD)
