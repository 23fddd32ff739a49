"""A test file importing from the package's top a name it does not export, or a top-level module that
does not exist (or a name such a module lacks), is not collected: pytest reports ``ImportError:
cannot import name ... from 'transformers'`` or ``No module named 'transformers.x'`` and runs none of
its tests (checked with real pytest on a copy of the 2026 tree). transformers' ``__init__.py`` is a
lazy module: its names are those its ``_import_structure`` spells, the ``__all__`` of the models'
modules, and its submodules. A name the analyzer cannot tell is missing leaves the tests undecided."""

import re

import pytest

from model_debugging.skips.resolve import package_exports
from model_debugging.skips.resolve.library import Library
from tests.skips.conftest import verdicts
from tests.skips.resolve.test_library_imports import LIBRARY, model, modeling

INIT = """
import sys
from typing import TYPE_CHECKING

from .utils import _LazyModule, is_torch_available
from .utils.import_utils import define_import_structure

_import_structure = {"utils": ["is_torch_available", "logging"], "activations": []}
if is_torch_available():
    _import_structure["modeling_utils"] = ["PreTrainedModel", "AttentionInterface"]

if TYPE_CHECKING:
    from .modeling_utils import AttentionInterface, PreTrainedModel
else:
    import_structure = define_import_structure("models")
    sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], import_structure)
    _create_module_alias(f"{__name__}.tokenization_utils_fast", ".tokenization_utils_tokenizers")
"""
LAZY = (
    "class _LazyModule:\n    def __getattr__(self, name):\n"
    '        if name.endswith("TokenizerFast"):\n            return getattr(self, name[:-4])\n'
    "        from ..convert_slow_tokenizer import SLOW_TO_FAST_CONVERTERS\n\n\n"
    "def is_torch_available():\n    return True\n\n\ndef define_import_structure(path):\n    return {}\n"
)


def package(*names: str) -> dict[str, str]:
    """The fake library with a lazy ``__init__`` as upstream writes it, and one model per name whose
    tokenizer module lists its class in ``__all__``; ``activations.py`` and a dummy objects file."""
    files = {
        **LIBRARY,
        "src/transformers/__init__.py": INIT,
        "src/transformers/utils/import_utils.py": LAZY,
        "src/transformers/utils/dummy_pt_objects.py": "class DummyOnlyModel:\n    pass\n",
        "src/transformers/activations.py": "ACT2FN = {}\n\n\ndef get_activation(name):\n    return ACT2FN[name]\n",
        "src/transformers/tokenization_utils_tokenizers.py": "class PreTrainedTokenizerFast:\n    pass\n",
        "src/transformers/convert_slow_tokenizer.py": (
            "class MustConverter:\n    pass\n\n\n"
            'SLOW_TO_FAST_CONVERTERS = {"MustTokenizer": MustConverter, "AliasTokenizer": MustConverter}\n'
        ),
    }
    for name in names:
        title = name.title()
        files.update(model(name, modeling(name)))
        files[f"src/transformers/models/{name}/tokenization_{name}.py"] = (
            f'class {title}Tokenizer:\n    pass\n\n\n__all__ = ["{title}Tokenizer"]\n'
        )
    return files


def with_import(files: dict[str, str], name: str, statement: str) -> dict[str, str]:
    """``files`` with ``statement`` written in model ``name``'s test file after ``import unittest``
    (from line 3 on)."""
    path = f"tests/models/{name}/test_modeling_{name}.py"
    return {**files, path: files[path].replace("import unittest\n", f"import unittest\n\n{statement}\n", 1)}


# (model, the import its test file adds, what pytest does: the error's line and message, or None)
MUST_NOT_COLLECT = [
    ("toplevel", "from transformers import SomeNameThatDoesNotExist", "cannot import name 'SomeNameThatDoesNotExist' from 'transformers'"),
    ("torchguarded", "if is_torch_available():\n    from transformers import ToplevelModell", "cannot import name 'ToplevelModell' from 'transformers'"),
    ("helpermodule", "from transformers.activations_x import ACT2FN", "No module named 'transformers.activations_x'"),
    ("dotted", "import transformers.some_missing_toplevel_module", "No module named 'transformers.some_missing_toplevel_module'"),
    ("helpername", "from transformers.activations import NoSuchActivation", "cannot import name 'NoSuchActivation' from 'transformers.activations'"),
]  # fmt: skip
MUST_COLLECT = [
    "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from transformers import SomeNameThatDoesNotExist",
    "from transformers import AttentionInterface, logging",  # the _import_structure lists
    "from transformers import MustTokenizer",  # a models module's __all__
    "from transformers import MustTokenizerFast",  # the lazy module answers it by MustTokenizer
    "from transformers import AliasTokenizer",  # by MustTokenizer too: the same converter
    "from transformers import activations, utils",  # submodules
    "from transformers.activations import ACT2FN, get_activation",
    "from transformers.tokenization_utils_fast import PreTrainedTokenizerFast",  # an alias the __init__ spells
    "try:\n    from transformers import SomeNameThatDoesNotExist\nexcept ImportError:\n    pass",
]


@pytest.mark.parametrize(("name", "statement", "message"), MUST_NOT_COLLECT)
def test_a_test_file_importing_what_the_package_lacks_is_not_collected(
    make_repo, scan, name, statement, message
):
    files = with_import(package(name, "must"), "must", "\n".join(MUST_COLLECT))
    results = scan(make_repo(with_import(files, name, statement)))
    assert verdicts(results, "test_forward") == {"ran": ["must"], "skipped": [], "undecided": []}
    path = f"tests/models/{name}/test_modeling_{name}.py"
    line = 4 if statement.startswith("if ") else 3
    assert scan.errors == [
        {"path": path, "line": line, "message": f"pytest cannot import this file: {message}"}
    ]


@pytest.mark.parametrize(
    ("statement", "because"),
    [
        # the lazy module answers XTokenizerFast by XTokenizer (not exported here either)
        (
            "from transformers import GoneTokenizerFast",
            "answers a name ending in TokenizerFast by another name",
        ),
        # a class of the modeling file left out of its __all__
        ("from transformers import MustAttention", "src/transformers/models/must/modeling_must.py spells it"),
        # exported from the dummy objects when torch is missing
        ("from transformers import DummyOnlyModel", "src/transformers/utils/dummy_pt_objects.py spells it"),
    ],
)
def test_a_name_the_package_may_lack_leaves_the_tests_undecided(make_repo, scan, statement, because):
    files = package("must")
    files["src/transformers/models/must/modeling_must.py"] = (
        modeling("must") + '\n\nclass MustAttention:\n    pass\n\n\n__all__ = ["MustModel"]\n'
    )
    results = scan(make_repo(with_import(files, "must", statement)))
    assert verdicts(results, "test_forward") == {"ran": [], "skipped": [], "undecided": ["must"]}
    assert because in str(results["test_forward"])
    assert scan.errors == []


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("MustTokenizer2", "tokenization_must.py"),  # a name added to a module the listing holds
        ("MustProcessor", "processing_must.py"),  # a module added: the listing of models/ is kept
    ],
)
def test_a_name_the_contributor_adds_to_a_models_all_is_seen_by_a_warm_scan(make_repo, scan, name, module):
    """The test file imports ``name`` before the contributor writes it; once ``module`` defines and
    lists it, a warm scan runs the tests, as a scan without the cache does."""
    repo = make_repo(with_import(package("must"), "must", f"from transformers import {name}"))
    assert verdicts(scan(repo), "test_forward")["ran"] == []
    (repo / f"src/transformers/models/must/{module}").write_text(
        f"class {name}:\n    pass\n\n\n__all__ = ['{name}']\n"
    )
    assert verdicts(scan(repo), "test_forward")["ran"] == ["must"]
    assert scan.errors == []


# Modules of a model's folder spelling their exports in the ways upstream writes them, and names
# spelt where no export reads them (a comment, a docstring, a file the lazy module leaves out).
TRICKY_MODULES = {
    # an alias listed (`X = Y`), a re-export of a sibling, `__all__` over several lines and `+=`
    "processing_must.py": (
        "from .tokenization_must import MustTokenizer as ReexportedTokenizer\n\n\n"
        "class MustProcessor:\n    pass\n\n\nAliasProcessor = MustProcessor\n"
        '__all__ = [\n    "MustProcessor",\n    "AliasProcessor",\n]\n__all__ += ["ReexportedTokenizer"]\n'
    ),
    # no __all__: every class and function of a file with a decorated definition
    "image_processing_must.py": (
        '@requires(backends=("torch",))\nclass MustImageProcessor:\n    pass\n\n\n'
        "def must_helper():\n    pass\n\n\nclass UndecoratedImageHelper:\n    pass\n"
    ),
    "feature_extraction_must.py": "class ExtractorInComment:  # __all__ = ['NotExported']\n    pass\n",
    "video_processing_must.py": '"""MustVideoProcessor, in a docstring."""\n\n\n__all__.extend(["MustVideoProcessor"])\n',
    "convert_must_weights.py": '__all__ = ["ConvertedOnly"]\n',
    "modular_must.py": '__all__ = ["ModularOnly"]\n',
}


def _old_models_exports(root, folder: str) -> frozenset[str]:
    """What the scanner read before the index: the union of every module's exports, each text read
    (the reading of ``_models_exports`` up to b9feb40, kept here as the reference)."""
    exports: set[str] = set()
    for path in sorted((root / folder / "models").rglob("*.py")):
        source = path.read_text()
        if path.name == "__init__.py" or path.name.startswith(("convert_", "modular_")):
            continue
        for listed in package_exports._ALL.findall(source) if "__all__" in source else ():
            exports.update(package_exports._QUOTED.findall(listed))
        if ("@requires" in source or "@export" in source) and package_exports._DECORATED.search(source):
            exports.update(package_exports._DEFINED.findall(source))
    return frozenset(exports)


def test_the_index_of_exports_reads_as_the_whole_library_did(make_repo):
    """Every word of a small library's modules is exported or not as reading every module said; an
    exported name reads only a module exporting it (an edit elsewhere asks nothing again), one
    exported nowhere reads every module's text (any of them may come to export it)."""
    files = package("must", "other")
    folder = "src/transformers"
    for name, text in TRICKY_MODULES.items():
        files[f"{folder}/models/must/{name}"] = text
    root = make_repo(files)
    library = Library((), root)
    old = _old_models_exports(root, folder)
    assert {"AliasProcessor", "ReexportedTokenizer", "must_helper", "MustVideoProcessor"} <= old
    assert not {"NotExported", "ConvertedOnly", "ModularOnly", "ExtractorInComment"} & old
    modules = {
        path.relative_to(root).as_posix()
        for path in (root / folder / "models").rglob("*.py")
        if path.name != "__init__.py"
    }
    words = {word for path in modules for word in re.findall(r"\w+", (root / path).read_text())}
    for word in sorted(words):
        with library.recording() as reads:
            found = package_exports._models_export(library, folder, word)
        assert found == (word in old), word
        flat = reads.flat()
        if found:
            exporting = {
                path
                for path in modules
                if word in package_exports._module_exports(path, (root / path).read_text())
            }
            assert len(modules & flat.texts) == 1 and modules & flat.texts <= exporting, word
        else:
            assert modules <= flat.texts, word


def test_a_name_taken_out_of_a_models_all_is_seen_by_a_warm_scan(make_repo, scan):
    """An exported name's answer reads only the module exporting it: when that module stops exporting
    it, a warm scan leaves the tests undecided (the module still spells it), as a scan without the
    cache does; an edit of another module changes nothing."""
    repo = make_repo(with_import(package("must", "other"), "must", "from transformers import MustTokenizer"))
    assert verdicts(scan(repo), "test_forward")["ran"] == ["must", "other"]
    other = repo / "src/transformers/models/other/tokenization_other.py"
    other.write_text(other.read_text() + "\n\nclass OtherHelper:\n    pass\n")
    assert verdicts(scan(repo), "test_forward")["ran"] == ["must", "other"]
    (repo / "src/transformers/models/must/tokenization_must.py").write_text(
        "class MustTokenizer:\n    pass\n\n\n__all__ = []\n"
    )
    warm = verdicts(scan(repo), "test_forward")
    assert warm == verdicts(scan(repo, use_cache=False), "test_forward")
    assert warm == {"ran": ["other"], "skipped": [], "undecided": ["must"]}
