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

import pytest

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


# The floors under the faces: services, permissions, validation, selectors, sql, models, core.
URL_FREE = ("services", "permissions.py", "validation", "selectors", "sql", "models", "core")


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


# Services write, selectors read (docs/architecture.md, "The floors"). A public function
# of `agentdocs/services/` must reach a write: itself, or through a function of the
# services it calls (followed to a fixed point). What counts as a write is read from the
# code: the ORM's writes and row locks, the cache's writes, a task or a signal sent, a
# commit hook, an HTTP request sent, a process global rebound. A read-only function
# belongs in `agentdocs/selectors/` (or, for a check of a value as a write takes it, in
# `agentdocs/validation/`, the module of its concept); those still here are listed below
# with the reason each stays, and the list only shrinks.

SERVICES = PACKAGE / "services"
ORM_WRITES = {
    "save",
    "delete",
    "create",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
    # A row lock is taken only to write under it.
    "select_for_update",
}
CACHE_WRITES = {"set", "set_many", "add", "delete", "delete_many", "incr", "decr", "touch", "clear"}
SENDS = {"delay", "apply_async", "send_task", "on_commit", "send", "send_robust", "urlopen"}
# `agentdocs/cache.py`'s writes that answer nothing (a read state stored, a turn counted).
CACHE_HELPER_WRITES = {"set_unanswered", "hash_count_unanswered"}


def _direct_writes(function: ast.AST) -> list[str]:
    """What in ``function`` writes, as `name()` strings (empty for none)."""
    found = []
    rebound = {
        target.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(function):
        if isinstance(node, ast.Global) and rebound & set(node.names):
            found.append("global")
        if not isinstance(node, ast.Call):
            continue
        call = node.func
        if isinstance(call, ast.Name) and call.id in CACHE_HELPER_WRITES:
            found.append(f"{call.id}()")
        if not isinstance(call, ast.Attribute):
            continue
        owner = call.value
        owner_name = owner.id if isinstance(owner, ast.Name) else ""
        if call.attr in ORM_WRITES | SENDS:
            found.append(f".{call.attr}()")
        elif call.attr in CACHE_WRITES and owner_name.endswith("cache"):
            found.append(f"cache.{call.attr}()")
        elif (
            # A queryset's `update(field=...)`: keywords only, never a dict's entry
            # (`bound["x"].update(...)`) or a hash (`digest.update(data)`).
            call.attr == "update"
            and node.keywords
            and not node.args
            and not isinstance(owner, ast.Subscript)
        ):
            found.append(".update()")
    return found


def _service_functions() -> dict[str, ast.FunctionDef]:
    """Every module-level function of the services, as `module.name`."""
    functions = {}
    for path in sorted(SERVICES.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions[f"{path.stem}.{node.name}"] = node
            elif isinstance(node, ast.ClassDef):
                # A class counts as one callee: building it is done to use its methods.
                functions[f"{path.stem}.{node.name}"] = node
    return functions


def _service_imports(path: Path) -> dict[str, str]:
    """Local name -> `module` (a services module) or `module.name` (one of its functions)."""
    names = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        for alias in node.names:
            local = alias.asname or alias.name
            if node.module == "agentdocs.services":
                names[local] = alias.name
            elif node.module.startswith("agentdocs.services."):
                names[local] = f"{node.module.rsplit('.', 1)[1]}.{alias.name}"
    return names


def _callees(module: str, function: ast.AST, imports: dict[str, str]) -> set[str]:
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            found.add(imports.get(node.id, f"{module}.{node.id}"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and "." not in imports.get(node.value.id, ".")
        ):
            found.add(f"{imports[node.value.id]}.{node.attr}")
    return found


def _writers(functions: dict[str, ast.AST], imports: dict[str, dict[str, str]]) -> set[str]:
    """The functions that write, directly or through another of ``functions``."""
    writers = {name for name, node in functions.items() if _direct_writes(node)}
    calls = {
        name: _callees(name.split(".")[0], node, imports[name.split(".")[0]]) & functions.keys()
        for name, node in functions.items()
    }
    grown = True
    while grown:
        grown = False
        for name in functions.keys() - writers:
            if calls[name] & writers:
                writers.add(name)
                grown = True
    return writers


def _public_readers() -> tuple[set[str], set[str]]:
    """(every public function of the services, those that reach no write)."""
    functions = _service_functions()
    imports = {path.stem: _service_imports(path) for path in SERVICES.glob("*.py")}
    writers = _writers(functions, imports)
    public = {
        name
        for name, node in functions.items()
        if not name.split(".")[1].startswith("_") and not isinstance(node, ast.ClassDef)
    }
    return public, public - writers


# Public functions of the services that write nothing, and why each stays for now. Move
# one (to `agentdocs/selectors/`, or a check of a value to `agentdocs/validation/`) and
# delete its line; never add one: a new read goes to the selectors.
READS_THAT_STAY = {
    # Guards a write runs under its row lock, in its transaction: the write's own rule.
    "document_locks.require_not_deleted": "guard of a write",
    "document_locks.require_unlocked": "guard of a write",
    "labels.require_room": "guard of a write",
    "review.review_gate": "guard of a write",
    "skill_locks.require_skill_unlocked": "guard of a write",
    # Pure helpers that shape what a write stores or sends (no database read at all).
    "archival.archive_bytes": "shapes a write",
    "archival.archive_bytes_bound": "shapes a write",
    "archival.archive_document": "shapes a write",
    "archival.archive_path": "shapes a write",
    "audit_chain.row_values": "shapes a write",
    "deliveries.event_payload": "shapes a write",
    "documents.sha256_of": "shapes a write",
    "events.binding_data": "shapes a write",
    "events.document_data": "shapes a write",
    "events.new_event": "shapes a write",
    "mcp_sessions.generated_process": "shapes a write",
    "memory_block.caller_of": "shapes a write",
    "memory_block.read_state_key": "shapes a write",
    "tokens.hash_key": "shapes a write",
    "tokens.key_from": "shapes a write",
    "webhook_sender.resolve": "shapes a write",
    "webhooks.allow_private_addresses": "shapes a write",
    "webhooks.new_secret": "shapes a write",
}
# The list's length: 51 when it was made (issue 35), 36 once the wire checks moved to
# `agentdocs/validation/`, 33 once the chain's reads moved to the selectors,
# 31 once the approvals that count moved to `permissions`, 23 once an import's plan
# became a selector. Lower it with the list, never raise it.
READS_THAT_STAY_AT_MOST = 23


def test_every_public_service_function_writes_or_is_listed_as_staying():
    public, readers = _public_readers()
    assert len(public) > 100  # the scan sees the services
    unlisted = sorted(readers - READS_THAT_STAY.keys())
    assert unlisted == [], (
        "public functions of agentdocs/services/ that write nothing (move them to "
        "agentdocs/selectors/): " + ", ".join(unlisted)
    )


def test_the_list_of_reads_that_stay_only_shrinks():
    _, readers = _public_readers()
    stale = sorted(READS_THAT_STAY.keys() - readers)
    assert stale == [], "gone from the services, or writing now: delete their lines: " + (
        ", ".join(stale)
    )
    assert len(READS_THAT_STAY) <= READS_THAT_STAY_AT_MOST


def test_the_write_check_sees_each_kind_of_write_and_no_read():
    source = """
def writes():
    Document.objects.filter(pk=1).update(body="x")
    document.save()
    Document.objects.create(path="a")
    Document.objects.select_for_update().get(pk=1)
    cache.set("k", 1)
    self_cache.incr("n")
    task.delay(1)
    transaction.on_commit(hook)
    event_committed.send(sender=None)
    set_unanswered("k", 1, 60)
    pool.urlopen("POST", "/")

def forgets():
    global _cached
    _cached = None

def reads():
    seen = set()
    seen.add(1)
    bound["instructions"].update(sha256="x")
    digest.update(b"x")
    cache.get("k")
    return Document.objects.filter(pk=1).first()
"""
    functions = {node.name: node for node in ast.parse(source).body}
    assert sorted(_direct_writes(functions["writes"])) == sorted(
        [
            ".update()",
            ".save()",
            ".create()",
            ".select_for_update()",
            "cache.set()",
            "cache.incr()",
            ".delay()",
            ".on_commit()",
            ".send()",
            "set_unanswered()",
            ".urlopen()",
        ]
    )
    assert _direct_writes(functions["forgets"]) == ["global"]
    assert _direct_writes(functions["reads"]) == []


def test_the_write_check_follows_calls_into_other_services():
    source = {
        "a": "from agentdocs.services import b\ndef outer():\n    return b.inner()\n",
        "b": "def inner():\n    return _save()\ndef _save():\n    thing.save()\n"
        "def alone():\n    return 1\n",
    }
    functions = {}
    imports = {}
    for module, text in source.items():
        tree = ast.parse(text)
        imports[module] = {"b": "b"} if module == "a" else {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                functions[f"{module}.{node.name}"] = node
    assert _writers(functions, imports) == {"a.outer", "b.inner", "b._save"}


@pytest.mark.parametrize("floor", ["selectors", "validation"])
def test_no_selector_or_check_of_a_value_writes(floor):
    # The other half of the rule: the selectors and the checks of values (which never
    # import a service, a contract) hold no write of their own either.
    paths = sorted((PACKAGE / floor).glob("*.py"))
    assert len(paths) > 3  # the scan sees the floor
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{node.name} {_direct_writes(node)}"
        for path in paths
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and _direct_writes(node)
    ]
    assert offenders == [], f"writes in agentdocs/{floor}/: " + ", ".join(offenders)
