"""The import graph of ``runtime/``, read from the source with ``ast`` (nothing is imported).

An edge A -> B means running A imports B. Imports inside functions count: a function-level import is a
cycle that only waits for the first call. Imports under ``if TYPE_CHECKING:`` do not count, since they never
run. Importing ``a.b.c`` also runs the ``__init__`` of ``a.b``, unless the importer sits inside ``a.b``
(then that package is already being imported), so such an import is an edge to ``a.b`` as well.

A package may export a name lazily (a module ``__getattr__`` that imports it on first use, as
``runtime.sessions`` does for ``RedisSessionService``). That import runs in whoever reads the name, so it is
an edge of the modules that import that name from the package, not of the package itself.

``python -m tests.runtime.import_graph`` prints the import cycles (strongly connected components).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "runtime"


def package_modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module under ``root/package`` by dotted name (a package by its own name, for its ``__init__``)."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_imports(node: ast.AST):
    """Yield every Import/ImportFrom under ``node``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            yield from _run_time_imports(ast.Module(body=child.orelse, type_ignores=[]))
        else:
            yield from _run_time_imports(child)


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str],
             lazy: dict[str, dict[str, set[str]]]) -> set[str]:
    """The runtime modules that running ``node`` inside ``module`` may execute."""
    if isinstance(node, ast.Import):
        named = {alias.name for alias in node.names}
    else:
        base = _base(module, is_package, node)
        # Reading a lazy export runs the import inside the package's __getattr__.
        named = set().union(*(lazy.get(base, {}).get(alias.name, set()) for alias in node.names))
        submodules = {f"{base}.{alias.name}" for alias in node.names} & known
        named |= submodules
        # Taking a name that is not a submodule reads the package's __init__ (even from inside the package).
        if len(submodules) < len(node.names) or base not in _ancestors(module):
            named.add(base)
    own = set(_ancestors(module)) | {module}
    return {
        target
        for name in named
        for target in [name, *_ancestors(name)]
        if target in known and target not in own
    }


def _lazy_getattr(tree: ast.Module) -> ast.FunctionDef | None:
    return next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"),
                None)


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Map each module of ``package`` (the runtime) to the modules of it that it imports at run time."""
    modules = package_modules(root, package)
    known = set(modules)
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in modules.items()}
    lazy: dict[str, dict[str, set[str]]] = {}
    for name, tree in trees.items():
        getattr_ = _lazy_getattr(tree) if modules[name].name == "__init__.py" else None
        if getattr_ is not None:
            tree.body.remove(getattr_)
            lazy[name] = {
                alias.asname or alias.name: _targets(name, True, node, known, {})
                for node in _run_time_imports(getattr_)
                for alias in node.names
            }
    graph = {}
    for name, tree in trees.items():
        is_package = modules[name].name == "__init__.py"
        graph[name] = set().union(*(_targets(name, is_package, n, known, lazy) for n in _run_time_imports(tree)))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


if __name__ == "__main__":
    graph = import_graph()
    for component in cycles(graph):
        print(f"{len(component)} modules:")
        for member in component:
            inside = sorted(graph[member] & set(component))
            print(f"  {member} -> {', '.join(inside)}")
