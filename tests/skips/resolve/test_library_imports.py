"""A test file whose import of the library fails is not collected: a model copied into a new folder
whose modeling file still imports the old one's configuration (a rename left undone), or a model
whose modeling file imports a broken model's. pytest reports ``ModuleNotFoundError: No module named
...`` at collection and runs none of the file's tests; the scan says the same, naming the library
file. Imports that may not run (in a ``try`` catching ImportError, in a function, under
``TYPE_CHECKING``) are not failures."""

from tests.skips.conftest import verdicts

LAZY_INIT = """
from typing import TYPE_CHECKING

from {dots}utils import _LazyModule
from {dots}utils.import_utils import define_import_structure


if TYPE_CHECKING:
    from .configuration_{model} import *
    from .modeling_{model} import *
else:
    import sys

    _file = globals()["__file__"]
    sys.modules[__name__] = _LazyModule(__name__, _file, define_import_structure(_file), module_spec=__spec__)
"""

LIBRARY = {
    "src/transformers/__init__.py": """
        from typing import TYPE_CHECKING

        from .utils import _LazyModule, is_torch_available
        from .utils.import_utils import define_import_structure

        if not TYPE_CHECKING:
            import sys

            sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], define_import_structure("models"))
    """,
    "src/transformers/utils/__init__.py": "from .import_utils import _LazyModule, is_torch_available\n",
    "src/transformers/utils/import_utils.py": (
        "class _LazyModule:\n    pass\n\n\ndef is_torch_available():\n    return True\n\n\n"
        "def define_import_structure(path):\n    return {}\n"
    ),
    "src/transformers/modeling_utils.py": "class PreTrainedModel:\n    pass\n",
    "src/transformers/configuration_utils.py": "class PreTrainedConfig:\n    pass\n",
    "src/transformers/models/__init__.py": "from ..utils import _LazyModule\n",
}


def model(name: str, modeling: str) -> dict[str, str]:
    """A model as a contributor adds one: its package (a lazy ``__init__`` as upstream writes it),
    configuration and modeling files, and a test file importing the classes as upstream's do."""
    title = name.title()
    folder = f"src/transformers/models/{name}"
    return {
        f"{folder}/__init__.py": LAZY_INIT.format(dots="...", model=name),
        f"{folder}/configuration_{name}.py": (
            f"from ...configuration_utils import PreTrainedConfig\n\n\nclass {title}Config(PreTrainedConfig):\n"
            f'    model_type = "{name}"\n'
        ),
        f"{folder}/modeling_{name}.py": modeling,
        f"tests/models/{name}/test_modeling_{name}.py": (
            f"import unittest\n\nfrom transformers import {title}Config, is_torch_available\n\n"
            "from ...test_modeling_common import ModelTesterMixin\n\n\n"
            f"if is_torch_available():\n    from transformers import {title}Model\n\n\n"
            f"class {title}ModelTest(ModelTesterMixin, unittest.TestCase):\n"
            f"    all_model_classes = ({title}Model,) if is_torch_available() else ()\n"
        ),
    }


def modeling(name: str, config_module: str = "", *, head: str = "") -> str:
    """A modeling file importing its configuration from ``config_module`` (its own by default), at line 2
    when ``head`` is empty."""
    config_import = f"from .{config_module or f'configuration_{name}'} import {name.title()}Config"
    return (
        f"{head}from ...modeling_utils import PreTrainedModel\n{config_import}\n\n\n"
        f"class {name.title()}Model(PreTrainedModel):\n    config_class = {name.title()}Config\n"
    )


def missing_module_entry(model: str, missing: str) -> dict:
    """The errors file's entry of a model's modeling file whose line 2 imports ``missing``."""
    return {
        "path": f"src/transformers/models/{model}/modeling_{model}.py",
        "line": 2,
        "message": f"pytest cannot import this file: No module named 'transformers.models.{model}.{missing}'",
    }


def test_a_copied_model_whose_modeling_file_imports_the_old_configuration_is_not_collected(make_repo, scan):
    files = {
        **LIBRARY,
        **model("original", modeling("original")),
        # copied from `original`, renamed, but for the module of one import
        **model("copied", modeling("copied", "configuration_original")),
    }
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == ["original"]
    cause = missing_module_entry("copied", "configuration_original")
    assert scan.errors == [
        {
            "path": "tests/models/copied/test_modeling_copied.py",
            "line": 9,  # `from transformers import CopiedModel`, under `if is_torch_available():`
            "message": "pytest cannot import this file: importing transformers.models.copied.modeling_copied "
            "fails: src/transformers/models/copied/modeling_copied.py, line 2: "
            "No module named 'transformers.models.copied.configuration_original'",
            "cause": cause,
        }
    ]


def test_a_model_importing_a_broken_models_modeling_file_is_not_collected_either(make_repo, scan):
    """B's modeling file imports A's, whose configuration import names a missing module: importing
    B's fails in A's file, and both test files are uncollected, their cause A's import."""
    b_modeling = modeling("bravo", head="from ..alpha.modeling_alpha import AlphaModel\n")
    files = {
        **LIBRARY,
        **model("alpha", modeling("alpha", "configuration_alhpa")),
        **model("bravo", b_modeling),
        **model("charlie", modeling("charlie")),
    }
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == ["charlie"]
    cause = missing_module_entry("alpha", "configuration_alhpa")
    assert [(error["path"], error["line"], error["cause"]) for error in scan.errors] == [
        ("tests/models/alpha/test_modeling_alpha.py", 9, cause),
        ("tests/models/bravo/test_modeling_bravo.py", 9, cause),
    ]
    assert (
        "importing transformers.models.bravo.modeling_bravo fails: src/transformers/models/alpha/"
        in (scan.errors[1]["message"])
    )


def test_imports_that_may_not_run_are_not_failures(make_repo, scan):
    """A missing module imported in a try catching ImportError, in a function or under TYPE_CHECKING
    (in the library or in the test file) breaks nothing at import time: pytest runs the tests."""
    missing = "from .configuration_missing import Thing"
    guarded = f"try:\n    {missing}\nexcept ImportError:\n    Thing = None\n"
    in_function = f"def load():\n    {missing}\n    return Thing\n"
    type_checking = f"from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    {missing}\n"
    files = {
        **LIBRARY,
        **model("guarded", modeling("guarded", head=guarded)),
        **model("infunction", modeling("infunction", head=in_function)),
        **model("typed", modeling("typed", head=type_checking)),
        **model("tested", modeling("tested", "configuration_missing")),
    }
    test_file = "tests/models/tested/test_modeling_tested.py"
    files[test_file] = files[test_file].replace(
        "if is_torch_available():\n    from transformers import TestedModel\n",
        "try:\n    from transformers import TestedModel\nexcept ImportError:\n    TestedModel = None\n",
    )
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == ["guarded", "infunction", "tested", "typed"]
    assert scan.errors == []


def test_a_library_edit_that_breaks_or_mends_an_import_is_seen_by_a_warm_scan(make_repo, scan):
    """The cache's rescan of a library change evaluates the model again; its errors are folded anew,
    as a scan without the cache gives them, when the edit breaks the import and when it mends it."""
    repo = make_repo(
        {**LIBRARY, **model("original", modeling("original")), **model("copied", modeling("copied"))}
    )
    assert verdicts(scan(repo), "test_forward")["ran"] == ["copied", "original"]
    modeling_file = repo / "src/transformers/models/copied/modeling_copied.py"
    modeling_file.write_text(modeling("copied", "configuration_original"))
    assert verdicts(scan(repo), "test_forward")["ran"] == ["original"]
    warm = scan.errors
    assert [error["cause"] for error in warm] == [missing_module_entry("copied", "configuration_original")]
    scan(repo, use_cache=False)
    assert warm == scan.errors
    modeling_file.write_text(modeling("copied"))
    assert verdicts(scan(repo), "test_forward")["ran"] == ["copied", "original"]
    assert scan.errors == []
