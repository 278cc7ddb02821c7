"""Hand-written SQL runs in `agentdocs/sql/` only; no floor under the faces builds a URL.

The other layer rules are import-linter contracts (`[tool.importlinter]` in
pyproject.toml, `lint-imports` in CI). These two are read from the code itself: the
first is about calls, not imports (outside `agentdocs/sql/`, and the migrations, which
run SQL by design, no module opens a cursor, runs `raw()` or `extra()`, or builds
`RawSQL`); the second names a part of Django, which import-linter sees only whole
(services return ids, and `agentdocs/links.py` builds the paths from the URL conf).
"""

from __future__ import annotations

import ast
from pathlib import Path

import agentdocs

PACKAGE = Path(agentdocs.__file__).parent
ALLOWED = ("sql", "migrations")
HAND_SQL_METHODS = {"cursor", "raw", "extra", "execute", "executemany"}
HAND_SQL_NAMES = {"RawSQL", "cursor"}


def _hand_sql(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each hand-SQL call in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in HAND_SQL_METHODS:
            owner = function.value
            # `execute` and friends only count on a database cursor or connection, not on
            # `subprocess` or an HTTP session; `cursor`/`raw`/`extra` count on anything
            # but an object of our own (the export's `self.cursor()` builds files).
            owner_name = owner.id if isinstance(owner, ast.Name) else ""
            if function.attr in {"execute", "executemany"} and "cursor" not in owner_name:
                continue
            if isinstance(owner, ast.Name) and owner.id == "self":
                continue
            found.append((node.lineno, f".{function.attr}()"))
        elif isinstance(function, ast.Name) and function.id in HAND_SQL_NAMES:
            found.append((node.lineno, f"{function.id}()"))
    return found


def _modules_outside_sql() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] not in ALLOWED
    ]


def test_hand_sql_runs_only_in_the_sql_package():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line} {what}"
        for path in _modules_outside_sql()
        for line, what in _hand_sql(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert offenders == [], "hand SQL outside agentdocs/sql/: " + ", ".join(offenders)


def test_the_check_sees_each_kind_of_hand_sql():
    source = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT 1")
Document.objects.raw("SELECT * FROM document")
Document.objects.extra(where=["1 = 1"])
Document.objects.annotate(n=RawSQL("SELECT 1", []))
"""
    found = {what for _, what in _hand_sql(ast.parse(source))}
    assert found == {".cursor()", ".execute()", ".raw()", ".extra()", "RawSQL()"}


def test_the_sql_package_is_where_the_check_finds_hand_sql():
    # Were the scan blind (a wrong path, a parse that saw nothing), the first test
    # would pass on any code: the sql package itself must show hand SQL to it.
    sql_modules = sorted((PACKAGE / "sql").glob("*.py"))
    assert any(_hand_sql(ast.parse(path.read_text())) for path in sql_modules)


# The floors under the faces: services, permissions, selectors, sql, models, core.
URL_FREE = ("services", "permissions.py", "selectors", "sql", "models", "core")


def _url_imports(tree: ast.AST) -> list[int]:
    """The lines that import `django.urls` (or `reverse` from `django.shortcuts`)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name.startswith("django.urls") for alias in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = {alias.name for alias in node.names}
            if (
                node.module.startswith("django.urls")
                or (node.module == "django" and "urls" in names)
                or (node.module == "django.shortcuts" and names & {"reverse", "resolve_url"})
            ):
                lines.append(node.lineno)
    return lines


def _url_free_modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] in URL_FREE
    ]


def test_no_floor_under_the_faces_imports_the_url_conf():
    modules = _url_free_modules()
    assert len(modules) > 100  # the scan sees the floors
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in modules
        for line in _url_imports(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert offenders == [], "django.urls under the faces: " + ", ".join(offenders)


def test_the_check_sees_each_way_of_importing_the_url_conf():
    source = """
import django.urls
from django.urls import reverse
from django import urls
from django.shortcuts import reverse as go
from django.urls.base import reverse_lazy
"""
    assert _url_imports(ast.parse(source)) == [2, 3, 4, 5, 6]
    assert _url_imports(ast.parse("from django.db import transaction")) == []
