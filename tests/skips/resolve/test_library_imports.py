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


def cannot_import_entry(path: str, line: int, name: str, module: str) -> dict:
    return {
        "path": path,
        "line": line,
        "message": f"pytest cannot import this file: cannot import name '{name}' from '{module}'",
    }


def test_a_modeling_file_importing_a_name_its_module_lacks_is_not_collected(make_repo, scan):
    """A typo in a name a modeling file imports (from its configuration, or from the shared
    modeling_utils.py): pytest reports ``ImportError: cannot import name ...`` at that line, through
    the test file's import of the model."""
    typo_config = modeling("typo").replace("import TypoConfig\n", "import TypoConfigg\n")
    typo_shared = modeling("shared").replace("import PreTrainedModel\n", "import PreTrainedModelX\n")
    files = {
        **LIBRARY,
        **model("typo", typo_config),
        **model("shared", typo_shared),
        **model("fine", modeling("fine")),
    }
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == ["fine"]
    folder = "src/transformers/models"
    assert [(error["path"], error["line"], error["cause"]) for error in scan.errors] == [
        (
            "tests/models/shared/test_modeling_shared.py",
            9,
            cannot_import_entry(
                f"{folder}/shared/modeling_shared.py", 1, "PreTrainedModelX", "transformers.modeling_utils"
            ),
        ),
        (
            "tests/models/typo/test_modeling_typo.py",
            9,
            cannot_import_entry(
                f"{folder}/typo/modeling_typo.py",
                2,
                "TypoConfigg",
                "transformers.models.typo.configuration_typo",
            ),
        ),
    ]


def test_a_test_file_importing_a_missing_module_or_name_of_the_library_is_not_collected(make_repo, scan):
    """The test file's own import names a modeling module that does not exist, or a name its
    modeling module lacks: pytest reports the error at the test file's line."""
    files = {**LIBRARY, **model("named", modeling("named")), **model("moduled", modeling("moduled"))}
    named, moduled = (
        "tests/models/named/test_modeling_named.py",
        "tests/models/moduled/test_modeling_moduled.py",
    )
    files[named] = files[named].replace(
        "import unittest\n",
        "import unittest\n\nfrom transformers.models.named.modeling_named import NamedModell\n",
    )
    files[moduled] = files[moduled].replace(
        "import unittest\n", "import unittest\n\nimport transformers.models.moduled.modeling_moduledd\n"
    )
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == []
    assert scan.errors == [
        {
            "path": moduled,
            "line": 3,
            "message": "pytest cannot import this file: "
            "No module named 'transformers.models.moduled.modeling_moduledd'",
        },
        cannot_import_entry(named, 3, "NamedModell", "transformers.models.named.modeling_named"),
    ]


def test_names_bound_in_any_way_at_run_time_are_not_missing(make_repo, scan):
    """Names a module binds otherwise than by a class: under ``try``/``except ImportError``, by an
    assignment, a loop or a ``with``, re-exported by an import; and modules whose names cannot be told
    (a star import, a module ``__getattr__``, writes through ``globals()``): pytest imports them all,
    and only the model importing a name nothing binds is not collected."""
    config = "from ...configuration_utils import PreTrainedConfig\n\n\n"
    shapes = {
        "guarded": "try:\n    from .helpers_missing import Extra\nexcept ImportError:\n    Extra = None\n",
        "assigned": "Extra, Other = 1, 2\n",
        "looped": "for Extra in range(2):\n    pass\n",
        "reexported": "from ...configuration_utils import PreTrainedConfig as Extra\n",
        "typechecked": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    Extra = int\nelse:\n    Extra = str\n",
        "starred": "from ...configuration_utils import *\n",
        "dynamic": "def __getattr__(name):\n    return name\n",
        "globaled": 'globals()["Extra"] = 1\n',
    }
    files = dict(LIBRARY)
    for name, text in shapes.items():
        title = name.title()
        body = f"{config}{text}\n\nclass {title}Config(PreTrainedConfig):\n    pass\n"
        files.update(
            model(name, modeling(name).replace(f"import {title}Config\n", f"import {title}Config, Extra\n"))
        )
        files[f"src/transformers/models/{name}/configuration_{name}.py"] = body
    # beside them, a name no statement binds
    files.update(
        model(
            "misspelled",
            modeling("misspelled").replace("import MisspelledConfig\n", "import MisspelledConfig, Extraa\n"),
        )
    )
    results = scan(make_repo(files))
    assert verdicts(results, "test_forward")["ran"] == sorted(shapes)
    assert [error["cause"]["message"] for error in scan.errors] == [
        "pytest cannot import this file: cannot import name 'Extraa' from "
        "'transformers.models.misspelled.configuration_misspelled'"
    ]


def test_a_modeling_file_importing_a_helper_module_its_folder_lacks_is_not_collected(make_repo, scan):
    """``from .vision import ...`` in a modeling file whose folder has no ``vision.py`` (a copied
    model that left it behind): pytest reports ``No module named`` at that line. A helper that is
    there is read, and a name it lacks is told as well. Once the helper is added, a warm scan runs
    the tests."""
    helper = "from .vision import VisionTower\n"
    files = {
        **LIBRARY,
        **model("lost", modeling("lost", head=helper)),
        **model("kept", modeling("kept", head=helper)),
        **model("lacking", modeling("lacking", head=helper)),
        "src/transformers/models/kept/vision.py": "class VisionTower:\n    pass\n",
        "src/transformers/models/lacking/vision.py": "class VisionTowers:\n    pass\n",
    }
    repo = make_repo(files)
    assert verdicts(scan(repo), "test_forward")["ran"] == ["kept"]
    modeling_file = "src/transformers/models/{}/modeling_{}.py"
    assert [error["cause"] for error in scan.errors] == [
        cannot_import_entry(
            modeling_file.format("lacking", "lacking"), 1, "VisionTower", "transformers.models.lacking.vision"
        ),
        {
            "path": modeling_file.format("lost", "lost"),
            "line": 1,
            "message": "pytest cannot import this file: No module named 'transformers.models.lost.vision'",
        },
    ]
    (repo / "src/transformers/models/lost/vision.py").write_text("class VisionTower:\n    pass\n")
    assert verdicts(scan(repo), "test_forward")["ran"] == ["kept", "lost"]  # warm: the new file is seen


def test_a_name_added_to_the_imported_module_is_seen_by_a_warm_scan(make_repo, scan):
    """The modeling file imports ``TypoConfigg``; the contributor adds that name to the configuration
    file (the modeling file unchanged): a warm scan runs the tests, as a scan without the cache does."""
    typo_config = modeling("typo").replace("import TypoConfig\n", "import TypoConfigg\n")
    repo = make_repo({**LIBRARY, **model("typo", typo_config)})
    assert verdicts(scan(repo), "test_forward")["ran"] == []
    configuration = repo / "src/transformers/models/typo/configuration_typo.py"
    configuration.write_text(configuration.read_text() + "\n\nTypoConfigg = TypoConfig\n")
    assert verdicts(scan(repo), "test_forward")["ran"] == ["typo"]
    assert scan.errors == []
