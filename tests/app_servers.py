"""App servers for the tests that span processes: gunicorn started as a subprocess
on a free port of 127.0.0.1, on production settings (`config.settings`), with the
environment a test names, and the small cast those tests render and write with.

The server inherits PYTHONPATH, so it imports the code under test. Its access log
names the worker process that served each request (`served_by`), which is how a test
shows that its requests really crossed processes.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"

# What a test's own environment must not pass on: the server gets exactly the
# database, cache and broker the test names.
_NOT_INHERITED = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")


def app_environment(folder: Path, **settings: str) -> dict[str, str]:
    """Production settings (DEBUG=0, plain HTTP on 127.0.0.1), static and media files
    and, without Redis, the file cache in ``folder``, and then ``settings``. (The file
    cache's default is the checkout's `cache/`, which servers of other tests and runs,
    on other databases with the same ids, would share.)"""
    (folder / "static").mkdir(exist_ok=True)
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _NOT_INHERITED and not name.startswith(("AGENTDOCS_", "CACHE_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=secrets.token_urlsafe(48),
        DEBUG="0",
        ALLOWED_HOSTS=HOST,
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        LOG_LEVEL="WARNING",
        STATIC_ROOT=str(folder / "static"),
        MEDIA_ROOT=str(folder / "media"),
        CACHE_DIR=str(folder / "cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    env.update(settings)
    return env


def manage(env: dict[str, str], *args: str) -> str:
    """Run manage.py with ``env``; its standard output (a failure fails the test)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"manage.py {args}: {result.stdout}\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


class AppServer:
    """One gunicorn master and its sync workers, in a process group of their own."""

    def __init__(self, env: dict[str, str], log_dir: Path, *, name: str = "app") -> None:
        self.env = env
        self.port = free_port()
        self.access_log = log_dir / f"{name}-access.log"
        self.error_log = log_dir / f"{name}-error.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self, *, workers: int = 2, max_requests: int = 0) -> AppServer:
        """Serve with ``workers`` workers; with ``max_requests`` each worker leaves after
        that many requests and gunicorn forks a new process in its place (from a master
        that has loaded the app, `--preload`, so that takes milliseconds, not a boot)."""
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "tests.warm_wsgi:application" if max_requests else "config.wsgi:application",
            "--bind",
            f"{HOST}:{self.port}",
            "--workers",
            str(workers),
            "--max-requests",
            str(max_requests),
            *(["--preload"] if max_requests else []),
            "--access-logfile",
            str(self.access_log),
            # The serving worker's pid, then the request line and the status.
            "--access-logformat",
            "%(p)s %(m)s %(U)s %(s)s",
            "--error-logfile",
            str(self.error_log),
        ]
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited: {self.log_text()}")
            try:
                requests.get(f"{self.url}/api/v1/ping", timeout=10)
                return self
            except requests.RequestException:  # not listening yet, or a worker still booting
                time.sleep(0.2)
        self.stop()
        raise AssertionError(f"gunicorn did not answer within 60 s: {self.log_text()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_text(self) -> str:
        return self.error_log.read_text() if self.error_log.exists() else ""

    def served_by(self, path: str, *, at_least: int = 0) -> list[int]:
        """The pids of the workers that answered requests to ``path``, in order. gunicorn
        writes each line just after sending the response, so this waits a little for
        ``at_least`` lines."""
        deadline = time.monotonic() + 10
        while True:
            lines = self.access_log.read_text().splitlines() if self.access_log.exists() else []
            pids = []
            for line in lines:
                pid, _method, served, _status = line.split(" ", 3)
                if served == path:
                    pids.append(int(pid.strip("<>")))
            if len(pids) >= at_least or time.monotonic() > deadline:
                return pids
            time.sleep(0.05)

    def call(
        self, method: str, path: str, token: str, body: dict[str, Any] | None = None
    ) -> requests.Response:
        return requests.request(
            method,
            f"{self.url}{path}",
            json=body,
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )


@dataclass(frozen=True)
class Cast:
    """What `seed` made: the tenant and project slugs and API token keys by name."""

    tenant: str
    project: str
    tokens: dict[str, str]

    @property
    def memory_block(self) -> str:
        return f"/api/v1/tenants/{self.tenant}/projects/{self.project}/memory-block/"

    def document(self, path: str) -> str:
        return f"/api/v1/tenants/{self.tenant}/projects/{self.project}/documents/{path}"


AGENT_NOTES = "# House rules\n- keep changes small\n"
# Tokens of the reader agents, with the person they belong to; `writer` is the admin's.
AGENT_TOKENS = {
    "turns": "agent-one",
    "limited": "agent-two",
    "person-a": "agent-three",
    "person-b": "agent-three",
    "cached": "agent-four",
}


def seed() -> Cast:
    """A tenant `scale` with a project `web` (an agent.md and two context documents),
    its admin's token (`writer`) and reader agents' render tokens (`AGENT_TOKENS`),
    written through the services like any client's data."""
    from django.contrib.auth import get_user_model

    from agentdocs.models import Role, Scope
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service

    users = get_user_model()
    admin = users.objects.create_user(username="scale-admin", password=None)
    tenant = tenant_service.tenant_create(slug="scale", name="Scale", user=admin)
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    for path, body in {
        "agent.md": AGENT_NOTES,
        ".AGENTS/overview.md": "# Overview\nA web shop.\n",
        ".AGENTS/conventions.md": "# Conventions\nWrite the test first.\n",
    }.items():
        document_service.document_create(
            project=project, path=path, body=body, user=admin, reason="seed"
        )
    writer = token_service.token_create(user=admin, name="writer", scopes=list(Scope.values))
    tokens = {"writer": writer.key}
    for username in sorted(set(AGENT_TOKENS.values())):
        users.objects.create_user(username=username, password=None)
        tenant_service.membership_set(
            tenant=tenant, username=username, role=Role.READER, actor=admin
        )
    for name, username in AGENT_TOKENS.items():
        user = users.objects.get(username=username)
        tokens[name] = token_service.token_create(user=user, name=name, scopes=["render"]).key
    return Cast(tenant=tenant.slug, project=project.slug, tokens=tokens)


def seed_in(env: dict[str, str]) -> Cast:
    """`seed` in the database ``env`` names, run by manage.py in a process of its own."""
    script = (
        "import json; from dataclasses import asdict; from tests.app_servers import seed; "
        "print(json.dumps(asdict(seed())))"
    )
    output = manage(env, "shell", "--no-imports", "-c", script)
    return Cast(**json.loads(output.strip().splitlines()[-1]))


def layer_states(response: requests.Response) -> dict[str, str]:
    """A render's layers that hold text, by kind: `full` or `unchanged`."""
    assert response.status_code == 200, response.text
    return {
        layer["kind"]: layer["state"]
        for layer in response.json()["layers"]
        if layer["state"] in ("full", "unchanged")
    }
