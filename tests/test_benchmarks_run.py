"""The benchmarks keep working: each runs briefly, end to end, and reports.

Figures are not asserted (speed is measured by running the benchmarks, not by
tests); what is checked is that every request succeeded and the report came out,
so a change that breaks a benchmark's seed or its server is caught here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import need_service

ROOT = Path(__file__).resolve().parent.parent

# The smoke runs on SQLite start from a copy of the run's migrated database.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("migrated_sqlite")]


def _redis_ping(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


@pytest.mark.parametrize("client", ["python", "wrk"])
def test_the_memory_block_benchmark_runs_and_reports(db, client):
    if client == "wrk":
        need_service("wrk", shutil.which("wrk") is not None, "install Debian's `wrk` package")
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the benchmark serves the app on PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    redis_url = settings.REDIS_URL
    need_service("Redis", bool(redis_url) and _redis_ping(redis_url), "set REDIS_URL")
    db_settings = connection.settings_dict
    host, port = db_settings.get("HOST") or "127.0.0.1", db_settings.get("PORT") or 5432
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "memory_block.py"),
            "--postgres",
            f"postgres://{db_settings['USER']}@{host}:{port}/postgres",
            "--database",
            f"{db_settings['NAME']}_bench_smoke",
            "--redis-url",
            redis_url,  # this worker's (config/test_settings.py), emptied around each test
            "--rounds",
            "1",
            "--seconds",
            "0.5",
            # The smoke run checks that every scenario runs and reports, not their speed.
            "--warm-up",
            "0.2",
            "--concurrency",
            "2",
            "--client",
            client,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    names = (
        "GET /api/v1/ping",
        "POST memory-block (stubs)",
        "POST memory-block (full)",
        "GET memory-block 304",
        "GET document 304",
        "MCP get_memory_block (stubs)",
        "MCP get_memory_block (full)",
    )
    throughput, cpu = result.stdout.split("CPU µs per request")
    rows = {
        name: line[len(name) :].split()
        for line in throughput.splitlines()
        for name in names
        if line.startswith(name)
    }
    assert set(rows) == set(names), result.stdout
    for name, row in rows.items():
        requests, errors = int(row[0]), int(row[1])
        assert requests > 0 and errors == 0, (name, row)
    assert "load average" in result.stdout
    # Where the CPU went: app, postgres, redis, client, rest, all, and ping's all ÷ this.
    cpu_rows = {
        name: [float(value) for value in line[len(name) :].split()]
        for line in cpu.splitlines()
        for name in names
        if line.startswith(name)
    }
    assert set(cpu_rows) == set(names), result.stdout
    for name, row in cpu_rows.items():
        assert len(row) == 7 and row[0] > 0 and row[5] > 0, (name, row)
    assert cpu_rows["GET /api/v1/ping"][6] == 1.0


def test_the_large_tenant_benchmark_runs_and_reports(db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the benchmark serves the app on PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    redis_url = settings.REDIS_URL
    need_service("Redis", bool(redis_url) and _redis_ping(redis_url), "set REDIS_URL")
    db_settings = connection.settings_dict
    host, port = db_settings.get("HOST") or "127.0.0.1", db_settings.get("PORT") or 5432
    sizes = ["--small", "60", "--projects", "60", "--documents", "60", "--versions", "60"]
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "large_tenant.py"),
            "--postgres",
            f"postgres://{db_settings['USER']}@{host}:{port}/postgres",
            "--database",
            f"{db_settings['NAME']}_bench_large_smoke",
            "--redis-url",
            redis_url,  # this worker's (config/test_settings.py), emptied around each test
            "--repeat",
            "2",
            *sizes,
            "--records",
            "60",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for name in ("render (turns)", "history API", "project page", "bind", "outdated"):
        assert any(line.startswith(name) for line in result.stdout.splitlines()), name
    assert "load average" in result.stdout


def test_the_hostile_input_benchmark_runs_and_reports():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hostile_input.py"), "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "secret scan" in result.stdout and "diff of two versions" in result.stdout


def test_the_member_budgets_benchmark_runs_and_reports(db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the benchmark seeds PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    db_settings = connection.settings_dict
    host, port = db_settings.get("HOST") or "127.0.0.1", db_settings.get("PORT") or 5432
    sizes = ["--documents", "20", "--versions", "30", "--version-kib", "4", "--records", "10"]
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "member_budgets.py"),
            "--postgres",
            f"postgres://{db_settings['USER']}@{host}:{port}/postgres",
            "--database",
            f"{db_settings['NAME']}_bench_budgets_smoke",
            "--repeat",
            "1",
            *sizes,
            "--proposal-kib",
            "4",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Exit 0: every request answered the status it should (budgets are not asserted).
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-4000:]
    for name in ("history API ?q=", "Export page", "MCP search_documents", "change request API"):
        assert any(line.startswith(name) for line in result.stdout.splitlines()), name
    assert "budget 0.5 s / 1 MB" in result.stdout


def _run_in_process_bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """An in-process benchmark (`bench.common.in_process_database`) on a throwaway
    SQLite file, with the few rounds given."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--sqlite", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_evidence_benchmark_runs_and_reports():
    result = _run_in_process_bench(
        "evidence.py", "--writes", "3", "--renders", "3", "--rounds", "1"
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "write chained / unchained:" in result.stdout
    assert "render signed / unsigned:" in result.stdout
    # The unchained side's history rows are outside the chain, and verify says so.
    assert "ok=False, first finding: unlinked" in result.stdout


def test_the_audit_benchmark_runs_and_reports():
    result = _run_in_process_bench(
        "audit.py", "--rows", "300", "--sync-rows", "100", "--rounds", "1"
    )
    # Exit 0: every request answered the status it should and the chain verified.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    out = result.stdout
    for line in ("GET verify, ", "POST verify, ", "(200, in the request)", "rows/s; ok=True"):
        assert line in out, out
    for line in (
        "GET export, ",
        "POST export, ",
        "(200, streamed)",
        "state done",
        "GET download, ",
    ):
        assert line in out, out


def test_the_labels_benchmark_runs_and_reports():
    result = _run_in_process_bench(
        "labels.py",
        "--renders",
        "2",
        "--rounds",
        "1",
        "--list-labels",
        "120",
        "--list-requests",
        "1",
    )
    # Exit 0: every side rendered each document at the version its label names.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "every one read at the expected version" in result.stdout
    for line in ("canary / none, render cache off:", "absent / none, render cache on:"):
        assert line in result.stdout, result.stdout
    # The labels list: a page of 50 entries, whichever page.
    assert "labels list of a document with 120 labels" in result.stdout
    assert "first page:" in result.stdout and "50 entries" in result.stdout
    assert "load average" in result.stdout


def test_the_repositories_benchmark_runs_and_reports():
    result = _run_in_process_bench("repositories.py", "--requests", "1", "--rounds", "1")
    # Exit 0: every list answered all its repositories, each behind.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for size in (1, 10, 100):
        assert any(
            line.startswith(f"{size} repositories (render cache off)")
            for line in result.stdout.splitlines()
        ), result.stdout
    assert "each repository beyond the first" in result.stdout
    assert "load average" in result.stdout


def test_the_repositories_bounds_benchmark_runs_and_reports():
    result = _run_in_process_bench(
        "repositories.py", "--bounds", "--requests", "1", "--rounds", "1"
    )
    # Exit 0: every list answered its 200 repositories, every page of checks answered.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    lines = result.stdout.splitlines()
    capped = next(line for line in lines if line.startswith("each a new set, capped"))
    assert capped.split()[-2:] == ["10", "190"], capped  # 10 exports built, 190 not
    order = next(line for line in lines if line.startswith("each a new order, capped"))
    assert order.split()[-2:] == ["1", "0"], order  # one set of formats: one export
    detail = next(line for line in lines if line.startswith("a repository with 30 checks"))
    sizes = [
        int(re.search(rf"{before} ([\d,]+) bytes", detail).group(1).replace(",", ""))
        for before in ("detail", "at most")
    ]
    assert max(sizes) < 1024 * 1024, detail  # the detail and every page of its checks
    assert "400 invalid naming 'files', limit 200" in result.stdout


def _postgres_admin_url() -> str:
    db_settings = connection.settings_dict
    host, port = db_settings.get("HOST") or "127.0.0.1", db_settings.get("PORT") or 5432
    return f"postgres://{db_settings['USER']}@{host}:{port}/postgres"


def test_the_writes_benchmark_runs_and_reports(db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "concurrent writers need PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "writes.py"),
            "--postgres",
            _postgres_admin_url(),
            "--database",
            f"{connection.settings_dict['NAME']}_bench_writes_smoke",
            *("--writes", "2", "--rounds", "1", "--writers", "2", "--tenants", "2"),
            *("--concurrent-writes", "2"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Exit 0: every tenant's chain held after the concurrent writers.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for line in ("chained / unchained:", "chained / plain:", "one tenant", "2 tenants"):
        assert line in result.stdout, result.stdout
    assert "chain verified after the run: ok=True" in result.stdout
    assert "load average" in result.stdout


def test_the_profile_benchmark_profiles_ping_and_a_render_side_by_side(db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the benchmark serves the app on PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    redis_url = settings.REDIS_URL
    need_service("Redis", bool(redis_url) and _redis_ping(redis_url), "set REDIS_URL")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "profile_render.py"),
            "--postgres",
            _postgres_admin_url(),
            "--database",
            f"{connection.settings_dict['NAME']}_bench_profile_smoke",
            "--redis-url",
            redis_url,  # this worker's (config/test_settings.py), emptied around each test
            *("--requests", "3", "--profile", "ping,full", "--top", "3"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    table = result.stdout.split("profiled ms per request")[1]
    assert table.split("\n")[0].split() == ["ping", "full"]
    for part in ("signature (Ed25519, claim)", "read-state write", "JSON encoding"):
        assert part in table, result.stdout
    assert "load average" in result.stdout


@pytest.mark.celery_worker
def test_the_archive_benchmark_runs_both_modes(db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the worker shares PostgreSQL; set DATABASE_URL to PostgreSQL",
    )
    redis_url = settings.REDIS_URL
    need_service("Redis", bool(redis_url) and _redis_ping(redis_url), "set REDIS_URL")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "archive_throughput.py"),
            *("--records", "20", "--concurrency", "1", "--batch-size", "8", "--timeout", "120"),
        ],
        # Its throwaway database is test_<name>: a name of its own, not this test run's.
        env={
            **os.environ,
            "DATABASE_URL": _postgres_admin_url().rsplit("/", 1)[0]
            + f"/{connection.settings_dict['NAME']}_archive_smoke",
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL or redis_url,
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for mode in ("per-record, concurrency 1: 20 records archived", "batch, concurrency 1: 20"):
        assert mode in result.stdout, result.stdout
    assert "3 UPDATEs" in result.stdout  # batches of 8, 8 and 4


def test_the_hook_context_benchmark_runs_and_reports():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hook_context.py"), "--runs", "1", "--timeout", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Exit 0: every hook run, up, down and slow, wrote the one valid JSON line.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for row in ("python -c pass", "GET ping", "hook startup", "hook resume", "hook down"):
        assert any(line.startswith(row) for line in result.stdout.splitlines()), result.stdout
    assert "hook startup / (python -c pass + GET ping):" in result.stdout
    assert "hook slow: p50" in result.stdout and "(target <= --timeout 1 + 0.2 s)" in result.stdout
    assert "load average" in result.stdout


def test_the_dev_timings_benchmark_runs_and_reports():
    """`--smoke`: the demo from a bare copy of this checkout (with this checkout's .venv,
    so nothing is installed) up to its first answer, and `dev.py test` on one file."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "dev_timings.py"), "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-4000:]
    lines = result.stdout.splitlines()
    first_answer = next(line for line in lines if "first answer (GET /login/)" in line)
    assert float(first_answer.split()[-1]) > 0, result.stdout
    assert any(line.strip().startswith("make .venv, install") for line in lines), result.stdout
    assert "nothing installed" in result.stdout
    wall = next(line for line in lines if line.strip().startswith("wall time"))
    assert wall.endswith("exit 0"), result.stdout
    assert "passed" in result.stdout and "load average at the end" in result.stdout


def test_the_dev_timings_benchmark_refuses_what_it_cannot_do():
    script = str(ROOT / "bench" / "dev_timings.py")
    for args in ([], ["--smoke", "demo"], ["demo", "--", "-x"], ["deploy"]):
        result = subprocess.run(
            [sys.executable, script, *args], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "usage: bench/dev_timings.py" in result.stderr, args


def test_the_outcomes_benchmark_runs_and_reports():
    result = _run_in_process_bench("outcomes.py", "--outcomes", "300", "--requests", "1")
    # Exit 0: every comparison answered, its cohorts adding up to the runs.
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    for by in ("label", "recipe", "version"):
        assert f"compare by {by}: median" in result.stdout, result.stdout
    assert "3 queries" in result.stdout and "canary: " in result.stdout
