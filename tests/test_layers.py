"""Hand-written SQL runs in `agentdocs/sql/` only.

The other layer rules are import-linter contracts (`[tool.importlinter]` in
pyproject.toml, `lint-imports` in CI); this one is about calls, not imports, so it is
read from the code itself: outside `agentdocs/sql/` (and the migrations, which run
SQL by design) no module opens a cursor, runs `raw()` or `extra()`, or builds
`RawSQL`.
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
