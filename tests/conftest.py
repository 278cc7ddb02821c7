"""The cast every feature's tests reuse: in tenant `acme` an admin, a writer and a
reader; in tenant `globex` an outsider (admin there, nobody in acme)."""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connections
from django.utils import timezone
from rest_framework.test import APIClient

from agentdocs.models import ApiToken, Project, Role, Scope, Tenant
from agentdocs.services import documents as document_service
from agentdocs.services import signing as signing_keys
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service

# Fixtures that test files of several folders share, in helper modules beside this file
# (a conftest.py lends its fixtures to its own folder only).
pytest_plugins = ["tests.audit_rules", "tests.export_projects", "tests.skill_bundles"]

ALL_SCOPES = list(Scope.values)
REQUIRE_SERVICES = os.environ.get("AGENTDOCS_REQUIRE_SERVICES", "") in ("1", "true", "yes")


def need_service(name: str, available: bool, reason: str) -> None:
    """Skip a test whose real service is missing, or fail when CI requires services."""
    if available:
        return
    message = f"{name} is not available: {reason}"
    if REQUIRE_SERVICES:
        pytest.fail(f"{message} (AGENTDOCS_REQUIRE_SERVICES is set, so this is a failure)")
    pytest.skip(message)


TEMPLATE_COMMENT = "agentdocs test template of run "
TEMPLATE_VARIABLE = "AGENTDOCS_TEST_TEMPLATE_DATABASE"  # bench/common.py reads it


def _template_name(test_name: str, worker: str) -> str:
    """The database every worker's is cloned from: test_<NAME>_template."""
    return f"{test_name.removesuffix(f'_{worker}') if worker else test_name}_template"


SQLITE_TEMPLATE_VARIABLE = "AGENTDOCS_TEST_TEMPLATE_SQLITE"  # bench/common.py reads it
ROOT = Path(__file__).resolve().parent.parent


def _migrations_digest() -> str:
    digest = hashlib.sha256()
    for migration in sorted((ROOT / "agentdocs" / "migrations").glob("*.py")):
        digest.update(migration.name.encode() + b"\0" + migration.read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def migrated_sqlite(request, tmp_path_factory) -> Path:
    """A SQLite database with every migration applied, made once per run (the first
    worker to ask builds it, the others wait on a lock), for what starts on a SQLite
    file of its own (a sweeper, a gunicorn, a benchmark's smoke run): a copy takes
    milliseconds, the migrations some 8 s of CPU. Its name carries a digest of the
    migrations, and its path is put in AGENTDOCS_TEST_TEMPLATE_SQLITE for the
    benchmarks (`bench.common.copy_sqlite_template`)."""
    base = tmp_path_factory.getbasetemp()
    folder = base.parent if hasattr(request.config, "workerinput") else base
    template = folder / f"agentdocs-migrated-{_migrations_digest()}.sqlite3"
    with open(folder / "agentdocs-migrated.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            building = template.with_suffix(".building")
            building.unlink(missing_ok=True)
            env = {
                name: value
                for name, value in os.environ.items()
                if not name.startswith(("AGENTDOCS_", "REDIS", "CELERY", "DATABASE", "DJANGO"))
            }
            env.update(
                DATABASE_URL=f"sqlite:///{building}",
                SECRET_KEY="a-test-key-" + "x" * 40,
                DJANGO_SETTINGS_MODULE="config.settings",
            )
            manage = [sys.executable, str(ROOT / "manage.py"), "migrate", "--no-input", "-v", "0"]
            subprocess.run(manage, cwd=ROOT, env=env, check=True, timeout=600)
            building.rename(template)
    os.environ[SQLITE_TEMPLATE_VARIABLE] = str(template)
    return template


@pytest.fixture(scope="session")
def django_db_setup(
    request,
    django_test_environment,
    django_db_blocker,
    django_db_use_migrations,
    django_db_keepdb,
    django_db_createdb,
    django_db_modify_db_settings,
):
    """Under pytest-xdist on PostgreSQL the migrations run once per run, not once per
    worker: the first worker to come builds test_<NAME>_template (the others wait on an
    advisory lock), then each clones it (`CREATE DATABASE ... TEMPLATE`, a file copy)
    into its own test_<NAME>_gw<n>, dropped at the end. A template left by an earlier
    run (its comment names another run) is built again. Otherwise, and with --reuse-db
    or --nomigrations, this is pytest-django's own setup."""
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    if (
        worker
        and connections["default"].vendor == "postgresql"
        and django_db_use_migrations
        and not django_db_keepdb
    ):
        yield from _cloned_test_database(request, django_db_blocker, worker)
    else:
        yield from _pytest_django_db_setup(
            request, django_db_blocker, django_db_use_migrations, django_db_keepdb
        )


def _pytest_django_db_setup(request, blocker, use_migrations: bool, keepdb: bool):
    """pytest-django's `django_db_setup` (4.x), which the fixture above replaces."""
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _disable_migrations, _get_databases_for_setup

    if not use_migrations:
        _disable_migrations()
    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    verbosity = request.config.option.verbose
    with blocker.unblock():
        made = setup_databases(
            verbosity=verbosity,
            interactive=False,
            aliases=aliases,
            serialized_aliases=serialized_aliases,
            **({"keepdb": True} if keepdb and not request.config.getvalue("create_db") else {}),
        )
    yield
    if not keepdb:
        with blocker.unblock():
            teardown_databases(made, verbosity=verbosity)


def _cloned_test_database(request, blocker, worker: str):
    connection = connections["default"]
    creation = connection.creation
    quote = connection.ops.quote_name
    verbosity = request.config.option.verbose
    test_name = connection.settings_dict["TEST"]["NAME"]
    template = _template_name(test_name, worker)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    with blocker.unblock():
        old_name = connection.settings_dict["NAME"]
        with creation._nodb_cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])
            try:
                cursor.execute(
                    "SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                    "WHERE datname = %s",
                    [template],
                )
                found = cursor.fetchone()
                if found is None or found[0] != TEMPLATE_COMMENT + run:
                    connection.settings_dict["TEST"]["NAME"] = template
                    try:
                        creation.create_test_db(
                            verbosity=verbosity, autoclobber=True, serialize=False
                        )
                        cursor.execute(
                            f"COMMENT ON DATABASE {quote(template)} IS %s",
                            [TEMPLATE_COMMENT + run],
                        )
                    finally:
                        connection.close()
                        connection.settings_dict["TEST"]["NAME"] = test_name
                cursor.execute(f"DROP DATABASE IF EXISTS {quote(test_name)}")
                cursor.execute(
                    f"CREATE DATABASE {quote(test_name)} WITH TEMPLATE {quote(template)}"
                )
            finally:
                cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [template])
        connection.settings_dict["NAME"] = test_name
        settings.DATABASES["default"]["NAME"] = test_name
    # The benchmarks' smoke runs copy it too instead of migrating a database of their
    # own (bench/common.py, `recreate_database`): the processes a test starts inherit it.
    os.environ[TEMPLATE_VARIABLE] = template
    yield
    os.environ.pop(TEMPLATE_VARIABLE, None)
    with blocker.unblock():
        creation.destroy_test_db(old_name, verbosity=verbosity)


def pytest_sessionfinish(session):
    """The xdist controller drops the workers' template once they are done (with psycopg:
    pytest-django allows no database access here)."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    db = connections["default"].settings_dict
    if connections["default"].vendor != "postgresql":
        return
    import psycopg
    from psycopg import sql

    template = _template_name(db["TEST"].get("NAME") or f"test_{db['NAME']}", "")
    params = {"host": db["HOST"], "port": db["PORT"], "user": db["USER"]}
    params["password"] = db["PASSWORD"]
    parameters = {key: value for key, value in params.items() if value}
    try:
        with psycopg.connect(dbname="postgres", autocommit=True, **parameters) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(template)))
    except psycopg.Error as error:  # the next run builds it again all the same
        print(f"tests/conftest.py: the test database {template} is left: {error}")


# Test files whose tests run one after another on one worker under pytest-xdist (as
# `python3 dev.py test` runs): the benchmarks' smoke runs each load the machine with a
# server and its clients; MCP Inspector keeps its settings in one HOME folder
# (tests/mcp_ts/.inspector-home). The others start servers once for their module (a
# module-scoped fixture): dealt out test by test, every worker would start its own.
SERIAL_GROUPS = {
    "tests/test_benchmarks_run.py": "benchmarks",
    "tests/api/test_mcp_ts.py": "mcp_ts",
    # migrates a SQLite database, seeds the demo, serves it with runserver
    "tests/test_newcomer.py": "newcomer",
    # migrates a SQLite database, serves it with gunicorn
    "tests/test_cache_shared.py": "shared_cache",
    # two gunicorn servers on the test database
    "tests/test_scaling_out.py": "scaling_out",
    # a gunicorn server on the test database
    "tests/cli/test_memory_block_offline.py": "offline_block",
}


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent with -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """xdist's `load` scheduling (one test at a time to whichever worker is free), with
    the tests of each file in SERIAL_GROUPS as one unit of work. (xdist's own
    `loadgroup` marks its groups by renaming the tests, which pytest 9.2 no longer
    lets it do: every test ran wherever.)"""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SerialGroupsScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SERIAL_GROUPS.get(nodeid.split("::", 1)[0], nodeid)

    return SerialGroupsScheduling(config, log)


# What `migrate` itself writes (its post_migrate signal): Django's flush empties these
# and has the signal write them again, with new ids; they are left as migrate left them.
MIGRATE_WRITES = frozenset({"django_content_type", "auth_permission"})


def empty_tables(alias: str = "default") -> list[str]:
    """Empty, on PostgreSQL, every table a test wrote rows to, as a transactional test's
    end does: what `manage.py flush` leaves (but the tables of MIGRATE_WRITES, untouched
    instead of emptied and written again). A `DELETE` of the few tables that hold rows,
    not flush's one `TRUNCATE` of all 60: that makes and syncs a new file for every table
    and its indexes, and took seconds per test on a loaded machine, as long as most tests
    run. The foreign keys Django makes are checked at the commit, so the order of the
    deletes does not matter; no table has a trigger on DELETE (one that refused them
    would need TRUNCATE here). Returns the tables emptied."""
    from django.db import transaction

    connection = connections[alias]
    quote = connection.ops.quote_name
    tables = [
        table
        for table in connection.introspection.django_table_names(
            only_existing=True, include_views=False
        )
        if table not in MIGRATE_WRITES
    ]
    if not tables:
        return []
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute(
            " UNION ALL ".join(
                f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(table)})" for table in tables
            ),
            tables,
        )
        holding = [row[0] for row in cursor.fetchall()]
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in holding:
            cursor.execute(f"DELETE FROM {quote(table)}")
    return holding


@pytest.fixture(autouse=True, scope="session")
def _transactional_tests_end_with_deletes():
    """A transactional test (`transactional_db`, `live_server`, `django_db(transaction=
    True)`) ends with `empty_tables()` on PostgreSQL instead of Django's flush; with
    `available_apps` or `serialized_rollback`, and on SQLite (whose flush is a DELETE
    already), with Django's own."""
    from django.test import TransactionTestCase

    flush = TransactionTestCase._fixture_teardown

    def teardown(self) -> None:
        aliases = self._databases_names(include_mirrors=False)
        if (
            self.available_apps is not None
            or self.serialized_rollback
            or any(connections[alias].vendor != "postgresql" for alias in aliases)
        ):
            flush(self)
            return
        for alias in aliases:
            empty_tables(alias)

    TransactionTestCase._fixture_teardown = teardown
    yield
    TransactionTestCase._fixture_teardown = flush


@pytest.fixture(autouse=True, scope="session")
def _urls_loaded():
    """The URLconf imported and its reverse map built once, before the first test, as a
    server has them when it serves: otherwise the first `reverse()` of a worker imports
    every view (the MCP SDK, DRF, ...) in the middle of a test, seconds between two
    writes a test may compare the times of (tests/migrations/test_0014_backfill_events.py)
    whichever test a worker happens to run first."""
    from django.urls import get_resolver

    get_resolver()._populate()


@pytest.fixture(autouse=True, scope="session")
def _client_cache_folder(tmp_path_factory):
    """The CLI's block cache (`agentdocs.client`) of every command a test starts, in a
    folder of the run's own, not the user's ~/.cache/agentdocs."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(autouse=True)
def _rate_limit_clock_stands_still(monkeypatch):
    """The rate limits' clock stands still for the length of a test: a test that spends
    a limit of "1/min" in two requests counts them in one window, wherever in the minute
    a slow run puts them (a window's end between them let the second through). Servers a
    test starts in a process of their own keep the real clock."""
    from types import SimpleNamespace

    from agentdocs import ratelimit

    standing = time.time()
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: standing))


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache: with Redis the read state would otherwise
    outlive the test that wrote it and meet a later test's reused ids."""
    cache.clear()
    signing_keys.signing_key_forget()  # the key a rolled-back test made is gone
    yield
    cache.clear()


@pytest.fixture
def signing_key(db):
    """The server's signing key, made and held in memory as a running server holds it
    after its first signature: a test counting a render's queries counts the hot path
    (tests/services/test_signing.py counts the first one)."""
    return signing_keys.signing_key_active()


def _make_user(username: str, **extra):
    return get_user_model().objects.create_user(
        username=username, password=f"{username}-password", **extra
    )


@pytest.fixture
def admin(db):
    return _make_user("alice")


@pytest.fixture
def writer(db):
    return _make_user("bob")


@pytest.fixture
def reader(db):
    return _make_user("carol")


@pytest.fixture
def outsider(db):
    return _make_user("mallory")


@pytest.fixture
def tenant(admin, writer, reader) -> Tenant:
    tenant = tenant_service.tenant_create(slug="acme", name="Acme", user=admin)
    tenant_service.membership_set(tenant=tenant, username="bob", role=Role.WRITER, actor=admin)
    tenant_service.membership_set(tenant=tenant, username="carol", role=Role.READER, actor=admin)
    return tenant


@pytest.fixture
def other_tenant(outsider) -> Tenant:
    return tenant_service.tenant_create(slug="globex", name="Globex", user=outsider)


@pytest.fixture
def project(tenant, admin) -> Project:
    return tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)


@pytest.fixture
def vance(tenant) -> Project:
    return tenant.projects.get(slug="_vance")


@pytest.fixture
def make_document(admin):
    def make(project: Project, path: str, body: str = "", user=None, reason: str = "fixture"):
        return document_service.document_create(
            project=project, path=path, body=body, user=user or admin, reason=reason
        )

    return make


def api_token_key(user, **extra) -> str:
    """A key of a new API token of `user` with every scope (the role still caps it),
    already marked used, so a test's first request does not write `last_used_at`."""
    new = token_service.token_create(user=user, name="test", scopes=ALL_SCOPES, **extra)
    ApiToken.objects.filter(pk=new.token.pk).update(last_used_at=timezone.now())
    return new.key


@pytest.fixture
def api():
    """An API client factory: ``api(user)`` is authenticated as that user."""

    keys: dict[int, str] = {}

    def make(user=None) -> APIClient:
        client = APIClient()
        if user is not None:
            # A real token, as clients send it: authentication reads the caller's
            # access in the same query, and every API test goes through that path.
            if user.pk not in keys:
                keys[user.pk] = api_token_key(user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {keys[user.pk]}")
        return client

    return make


# Webhooks: a real HTTP receiver on 127.0.0.1 (config.test_settings allows private
# addresses), answering from a script and recording what it was sent.


class WebhookReceiver:
    """Answers each request with the next scripted (status, body), then with ``default``;
    a scripted status of None holds the request until ``release()``."""

    def __init__(self, server, path: str = "/hook") -> None:
        import threading

        self.server = server
        self.path = path
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.script: list[tuple[int | None, str]] = []
        self.default = (200, "ok")
        self.received: list[tuple[bytes, dict[str, str]]] = []
        self.held = threading.Event()

    @property
    def url(self) -> str:
        return self.server.url_for(self.path)

    def answer(self, *script: tuple[int | None, str]) -> None:
        self.script.extend(script)

    def release(self) -> None:
        self.released.set()

    def handle(self, request):
        from werkzeug import Response

        with self.lock:
            self.received.append((request.get_data(), dict(request.headers)))
            status, body = self.script.pop(0) if self.script else self.default
        if status is None:
            self.held.set()
            self.released.wait(timeout=60)
            status = 200
        return Response(body, status=status)


@pytest.fixture(scope="session")
def _webhook_server():
    """One receiving server per worker: stopping a server waits out its poll (up to half
    a second), which a hundred tests paid each."""
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.stop()


_receivers = itertools.count(1)


@pytest.fixture
def webhook_receiver(_webhook_server):
    """A receiver of this test's own: a path no earlier test's webhook names, so a late
    delivery of an earlier test is answered 500 and never recorded here."""
    path = f"/hook/{next(_receivers)}"
    receiver = WebhookReceiver(_webhook_server, path)
    _webhook_server.expect_request(path, method="POST").respond_with_handler(receiver.handle)
    try:
        yield receiver
    finally:
        receiver.release()
        _webhook_server.clear()


@pytest.fixture
def sweep_webhooks(django_capture_on_commit_callbacks):
    """``sweep_webhooks()`` sends what the webhook outbox holds, as the sweeper
    (`manage.py webhook_sweep`) does without a broker: no request sends a delivery."""
    from agentdocs.services import deliveries as delivery_service

    def sweep() -> list[int]:
        with django_capture_on_commit_callbacks(execute=True):
            return delivery_service.delivery_sweep()

    return sweep


@pytest.fixture
def celery_eager():
    """Tasks run in-process, as with no broker, even when CELERY_BROKER_URL names one."""
    from config.celery import app as celery_app

    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = eager


def run_concurrently(count: int, work, *, join_timeout: float = 30) -> list[object]:
    """Start ``count`` threads that call ``work(i)`` at the same moment; collect results
    (an exception raised by ``work`` is its result: the outcome under test)."""
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = work(i)
        except Exception as error:  # the outcome under test
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=join_timeout)
    return results
