"""The core is NumPy only: importing it never loads Qt, and no core file imports a GUI toolkit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import qkv_studio

PACKAGE = Path(qkv_studio.__file__).resolve().parent
CORE = PACKAGE / "core"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "PySide2", "pyqtgraph", "superqt", "qtpy", "matplotlib")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=PACKAGE.parent)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


PROBE = ("import sys; {stmt}; "
         "print('loaded:' + ','.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({forbidden!r}))))")


def test_importing_the_core_loads_no_gui_toolkit():
    stmt = "import qkv_studio.core, qkv_studio.core.numbers; qkv_studio.core.load_preset('lesson').result()"
    assert _run(PROBE.format(stmt=stmt, forbidden=FORBIDDEN)) == "loaded:"


def test_the_probe_does_see_a_toolkit_when_one_is_imported():
    # proves the check above can fail
    assert _run(PROBE.format(stmt="import PySide6.QtCore", forbidden=FORBIDDEN)) == "loaded:PySide6"


def test_the_command_line_exports_numbers_and_lists_presets_without_qt(tmp_path):
    out = tmp_path / "w.csv"
    stmt = (f"from qkv_studio.cli import main; "
            f"assert main(['export', '--preset', 'lesson', '-o', {str(out)!r}]) == 0; "
            f"assert main(['presets']) == 0")
    printed = _run(PROBE.format(stmt=stmt, forbidden=FORBIDDEN)).splitlines()
    assert printed[-1] == "loaded:" and out.exists()


STATE = PACKAGE / "state"


def test_the_state_layer_loads_no_widgets():
    # import-linter (pyproject.toml) forbids state -> qkv_studio.ui, but cannot name a submodule of
    # PySide6: this probe and the scan below keep PySide6.QtWidgets out of the state layer.
    modules = sorted(f"qkv_studio.state.{p.stem}" for p in STATE.glob("*.py") if p.stem != "__init__")
    assert modules, "no state modules found"
    stmt = f"import {', '.join(modules)}"
    probe = ("import sys; {stmt}; print('loaded:' + ','.join(sorted(m for m in sys.modules "
             "if m == 'PySide6.QtWidgets' or m.startswith('qkv_studio.ui'))))")
    assert _run(probe.format(stmt=stmt)) == "loaded:"
    for path in sorted(STATE.rglob("*.py")):
        bad = {name for name in _full_imports(path) if name == "PySide6.QtWidgets" or name.startswith(
            ("PySide6.QtWidgets.", "qkv_studio.ui"))}
        assert not bad, f"{path.name} imports {', '.join(sorted(bad))}"


def _full_imports(path: Path) -> set[str]:
    """Every module a file imports, by its full name (``from PySide6 import QtWidgets`` counts as
    ``PySide6.QtWidgets``), wherever the import statement is."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_the_widget_probe_and_scan_do_see_qtwidgets(tmp_path):
    probe = ("import sys; import PySide6.QtWidgets; print('loaded:' + ','.join(sorted(m for m in sys.modules "
             "if m == 'PySide6.QtWidgets')))")
    assert _run(probe) == "loaded:PySide6.QtWidgets"
    sample = tmp_path / "sample.py"
    sample.write_text("from PySide6 import QtWidgets\ndef later():\n    from qkv_studio.ui.widgets import arrows\n")
    assert {"PySide6.QtWidgets", "qkv_studio.ui.widgets.arrows"} <= _full_imports(sample)


def _module_level(tree: ast.Module):
    """Statements that run on import: the module body and the branches of top-level if/try blocks."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body + node.orelse + getattr(node, "finalbody", [])
                         + [s for h in getattr(node, "handlers", []) for s in h.body])


def _imported_modules(path: Path, on_import_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in (_module_level(tree) if on_import_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.add(arg.value.split(".")[0])
    return names


def test_no_core_file_imports_a_gui_toolkit():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) >= 5
    for path in files:
        bad = _imported_modules(path) & set(FORBIDDEN)
        assert not bad, f"{path.name} imports {', '.join(sorted(bad))}"
        text = path.read_text(encoding="utf-8")
        assert not any(f"import {name}" in text or f"from {name}" in text for name in FORBIDDEN), path.name


def test_importing_core_needs_only_the_standard_library_and_numpy():
    # Optional libraries (e.g. for loading a real model) may be imported inside a function, never on import.
    allowed = set(sys.stdlib_module_names) | {"numpy", "qkv_studio"}
    for path in sorted(CORE.rglob("*.py")):
        extra = _imported_modules(path, on_import_only=True) - allowed
        assert not extra, f"{path.name} imports {', '.join(sorted(extra))}"


def test_the_scanner_notices_a_qt_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import numpy as np\nfrom PySide6.QtCore import QObject\n"
                      "try:\n    import yaml\nexcept ImportError:\n    pass\n"
                      "def later():\n    import tokenizers\n")
    assert {"PySide6", "tokenizers", "yaml"} <= _imported_modules(sample)
    assert _imported_modules(sample, on_import_only=True) == {"numpy", "PySide6", "yaml"}


# ---- no import cycle (issue 31 item 6) -------------------------------------------------------------------
# The layers themselves are one import-linter `layers` contract in pyproject.toml (`lint-imports`, run by
# `make test`).  What it cannot say: no module imports itself back through others, inside a layer too.
# Imports inside functions count (they run); imports under `if TYPE_CHECKING:` do not (they never run: they
# only name types for mypy).  A cycle listed here is an exception someone has to remove: it names its
# issue, and the test fails once it is gone, so that its line goes too.
# Each exception is a package inside which a cycle is still allowed (a cycle reaching outside it is not).
KNOWN_CYCLES: dict[str, str] = {
    "qkv_studio.ui.window": "issue 31 item 3: the window's parts still import one another (actions ⇄ menus "
                            "through make_action; keys and slide_picture back into actions and main_window)",
}


def import_cycles(package: str) -> list[frozenset[str]]:
    """Every import cycle in ``package``: the strongly connected components of more than one module of its
    import graph (grimp's, which counts imports inside functions), found with Tarjan's algorithm."""
    import grimp

    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _inside(cycle: frozenset[str], package: str) -> bool:
    return all(m == package or m.startswith(package + ".") for m in cycle)


def test_no_import_cycle_anywhere_in_the_package():
    cycles = import_cycles("qkv_studio")
    new = [sorted(c) for c in cycles if not any(_inside(c, package) for package in KNOWN_CYCLES)]
    assert not new, f"import cycles: {new}"
    gone = [package for package in KNOWN_CYCLES if not any(_inside(c, package) for c in cycles)]
    assert not gone, f"no cycle is left in {gone}: remove their lines from KNOWN_CYCLES"


def test_the_cycle_finder_sees_a_cycle_through_an_import_inside_a_function(tmp_path, monkeypatch):
    pkg = tmp_path / "cyclepkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyclepkg import b\n")
    (pkg / "b.py").write_text("def later():\n    from cyclepkg.sub import c\n")
    (pkg / "sub" / "c.py").write_text("import cyclepkg.a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyclepkg import e\n")
    (pkg / "e.py").write_text("from cyclepkg import d\n")  # (d → e only for the type checker: no cycle)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("cyclepkg") == [frozenset({"cyclepkg.a", "cyclepkg.b", "cyclepkg.sub.c"})]


def test_the_layers_are_one_contract_in_the_readmes_order():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10 (import-linter brings tomli there)
        import tomli as tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    layered = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert len(layered) == 1, [c["name"] for c in layered]
    layers = [[m.strip() for m in layer.split(":")] for layer in layered[0]["layers"]]
    order = [m for layer in layers for m in layer]
    # the README's picture, top to bottom: every package of the app is in it, each once
    picture = ("cli", "app", "ui.window", "ui.panels", "ui.widgets", "export", "state", "render", "core")
    for upper, lower in zip(picture, picture[1:], strict=False):
        assert order.index(f"qkv_studio.{upper}") < order.index(f"qkv_studio.{lower}"), (upper, lower)
    packages = {f"qkv_studio.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and p.name != "ui"}
    packages |= {f"qkv_studio.ui.{p.name}" for p in (PACKAGE / "ui").iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(order) and len(order) == len(set(order)), packages - set(order)


def _model_names_imported(path: Path) -> set[str]:
    """What a file imports of the model package, as ``module.name`` (``qkv_studio.core.models.SmolLM2``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                "qkv_studio.core.models"):
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("qkv_studio.core.models"))
    return found


def test_no_window_module_names_a_particular_model(tmp_path):
    # import-linter forbids ui → core.models.smollm2/minilm; this also catches a model's class taken from the
    # package (`from qkv_studio.core.models import SmolLM2`), which the contract cannot tell from the registry.
    particular = ("smollm2", "minilm")
    files = sorted((PACKAGE / "ui").rglob("*.py"))
    assert len(files) > 20
    for path in files:
        named = {n for n in _model_names_imported(path) if any(p in n.lower() for p in particular)}
        assert not named, f"{path.relative_to(PACKAGE)} imports {', '.join(sorted(named))}"
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from qkv_studio.core.models import SmolLM2, get_model\n")
    assert _model_names_imported(sample) == {"qkv_studio.core.models.SmolLM2", "qkv_studio.core.models.get_model"}
