#!/usr/bin/env python3
"""A newcomer's two commands, on a machine that has nothing but Python 3.11+.

    python3 dev.py demo [--port 8000] [--reload]
        Make .venv, install agentdocs into it (what the product needs to run, no
        development tools), migrate a SQLite database, load the demo data (printing
        the demo users' passwords) and serve the app at http://127.0.0.1:8000.

    python3 dev.py test [pytest arguments]
        Make .venv, install agentdocs and its development tools into it, then run
        the whole test suite on several workers (pytest-xdist; `-n 0` runs it in
        this one process, `-n 4` on four workers).

    python3 dev.py setup
        Only make .venv and install agentdocs and its development tools into it
        (CI uses this before linting).

    python3 dev.py manage COMMAND [arguments]
        Run a manage.py command against the demo's database and settings, for
        example `python3 dev.py manage token_create writer`.

Both are re-runnable: the install is skipped while pyproject.toml is unchanged
(the demo's install is topped up with the development tools when a test run
needs them), and the demo keeps its database, its SECRET_KEY and its users'
passwords.

Only the standard library is used here, because this runs before anything is
installed. Everything else runs with the virtual environment's own Python.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
INSTALL_STAMP = VENV / ".agentdocs-installed"
SECRET_KEY_FILE = ROOT / ".secret_key"
MIN_PYTHON = (3, 11)

# The demo is served over plain HTTP on localhost, so the HTTPS-only protections
# that production keeps on would stop the browser from signing in. DEBUG stays off:
# a visitor sees the app's own 404 and 403 pages, not Django's debug pages
# (runserver --insecure serves the static files instead).
DEMO_SETTINGS = {
    "DEBUG": "0",
    # The demo listens on 127.0.0.1 only; any Host name that reaches it is fine.
    "ALLOWED_HOSTS": "*",
    "SECURE_SSL_REDIRECT": "0",
    "SESSION_COOKIE_SECURE": "0",
    "CSRF_COOKIE_SECURE": "0",
    "SECURE_HSTS_SECONDS": "0",
    # The demo's webhook receivers are on this machine.
    "AGENTDOCS_WEBHOOK_ALLOW_PRIVATE": "1",
    "SECURE_HSTS_PRELOAD": "0",
}


def say(message: str) -> None:
    print(f"dev.py: {message}", flush=True)


def fail(message: str, code: int = 1) -> None:
    print(f"dev.py: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def run(command: list[str], env: dict[str, str]) -> None:
    """Run a setup step; a failed step stops everything with its exit code."""
    completed = subprocess.run(command, cwd=ROOT, env=env, check=False)
    if completed.returncode != 0:
        fail(f"{' '.join(command)} exited with {completed.returncode}", completed.returncode)


def base_env() -> dict[str, str]:
    """The environment every step runs in: the caller's, pointed at .venv."""
    env = dict(os.environ)
    bin_dir = str(venv_python().parent)
    env["VIRTUAL_ENV"] = str(VENV)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONHOME", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def install_fingerprint() -> str:
    """Changes whenever the dependencies (pyproject.toml) or the interpreter change."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


# What the stamp says was installed: the product alone (the demo's), or with the
# development tools (tests, linters, type checker, docs site). A stamp of an older
# dev.py holds the fingerprint alone; it always installed the development tools.
PRODUCT, DEVELOPMENT = "product", "dev"


def installed_kind(fingerprint: str) -> str | None:
    """PRODUCT or DEVELOPMENT when .venv holds this pyproject.toml's install, else None."""
    if not INSTALL_STAMP.exists():
        return None
    stamp = INSTALL_STAMP.read_text().split()
    if not stamp or stamp[0] != fingerprint:
        return None
    return stamp[1] if len(stamp) > 1 and stamp[1] == PRODUCT else DEVELOPMENT


def ensure_venv(env: dict[str, str], *, dev: bool = True) -> None:
    """Make .venv and install agentdocs into it: with its development tools when
    ``dev``, else only what the product needs to run (the demo's, a quicker install)."""
    if not venv_python().exists():
        say(f"creating the virtual environment in {VENV.name}/")
        completed = subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=False)
        if completed.returncode != 0 or not venv_python().exists():
            fail(
                "could not create .venv. On Debian or Ubuntu install the venv module "
                "first: sudo apt-get install python3-venv"
            )
    fingerprint = install_fingerprint()
    kind = installed_kind(fingerprint)
    if kind == DEVELOPMENT or (kind == PRODUCT and not dev):
        return
    if dev:
        say(
            "installing agentdocs and its development tools into .venv "
            "(the first time takes a few minutes)"
        )
        target = ".[dev]"
    else:
        say("installing agentdocs into .venv (the first time takes a minute)")
        target = "."
    run([str(venv_python()), "-m", "pip", "install", "--quiet", "-e", target], env)
    # Written only after a successful install, so an interrupted one is retried.
    INSTALL_STAMP.write_text(f"{fingerprint} {DEVELOPMENT if dev else PRODUCT}\n")


def ensure_secret_key(env: dict[str, str]) -> None:
    """Use SECRET_KEY from the environment, else the one kept in .secret_key (git-ignored)."""
    if env.get("SECRET_KEY"):
        return
    if SECRET_KEY_FILE.exists() and SECRET_KEY_FILE.read_text().strip():
        env["SECRET_KEY"] = SECRET_KEY_FILE.read_text().strip()
        return
    key = secrets.token_urlsafe(50)
    SECRET_KEY_FILE.write_text(key + "\n")
    SECRET_KEY_FILE.chmod(0o600)
    say(f"generated a SECRET_KEY for this checkout in {SECRET_KEY_FILE.name}")
    env["SECRET_KEY"] = key


def ensure_port_free(host: str, port: int) -> None:
    """Fail before migrating and seeding when the port is taken, not after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the server will bind: a port left in TIME_WAIT is free, a listening one is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            fail(
                f"port {port} on {host} is in use ({error.strerror}): stop what serves "
                f"there, or pick another port: python3 dev.py demo --port {port + 1}"
            )


def manage(*args: str) -> list[str]:
    return [str(venv_python()), str(ROOT / "manage.py"), *args]


def demo_env() -> dict[str, str]:
    """The demo's environment: .venv installed, its SECRET_KEY and settings."""
    env = base_env()
    ensure_venv(env, dev=False)
    ensure_secret_key(env)
    env.update(DEMO_SETTINGS)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return env


def demo(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py demo",
        description="Install, migrate, load the demo data and serve agentdocs on localhost.",
    )
    parser.add_argument("--port", type=int, default=8000, help="port to serve on (8000)")
    parser.add_argument(
        "--reload", action="store_true", help="restart the server when the code changes"
    )
    options = parser.parse_args(argv)

    ensure_port_free("127.0.0.1", options.port)
    env = demo_env()
    address = f"127.0.0.1:{options.port}"
    run(manage("migrate", "--no-input"), env)
    run(manage("seed_demo", "--base-url", f"http://{address}"), env)

    # runserver --insecure serves the static files from the apps; WhiteNoise only warns
    # when the folder collectstatic would fill does not exist.
    Path(env.get("STATIC_ROOT") or ROOT / "staticfiles").mkdir(parents=True, exist_ok=True)
    # Without a broker no request sends a webhook delivery: each waits in the outbox
    # for a sweep, which this child runs every 10 s until the server stops.
    # This process becomes the server (exec below), so the sweeper's parent is its pid.
    sweeper = manage("webhook_sweep", "--every", "10", "--parent", str(os.getpid()))
    subprocess.Popen(sweeper, cwd=ROOT, env=env)
    say(f"serving agentdocs at http://{address}/ (Ctrl-C stops it)")
    say(f"sign in at http://{address}/ with one of the users printed above")
    command = manage("runserver", address, "--insecure")
    if not options.reload:
        command.append("--noreload")
    if os.name == "posix":
        # Replace this process, so Ctrl-C or a kill of this pid stops the server itself.
        os.execve(command[0], command, env)
    try:
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 0


# Most tests wait on PostgreSQL, Redis, a subprocess or a browser part of the time, so
# a worker per core leaves the cores idle then: one worker more than the cores keeps
# them busy (on the 2-core machine the suite took 9 min 16 s on three workers; CPU idle
# 0%). Past four, the workers' start (each imports and collects the whole suite) costs
# more than it gains.
MAX_TEST_WORKERS = 4
# Arguments that choose the workers themselves, or need the tests in this process.
_OWN_WORKERS = ("-n", "--numprocesses")
_IN_THIS_PROCESS = ("--pdb", "--trace", "--collect-only", "--co", "no:xdist", "-pno:xdist")


def test_workers(argv: list[str]) -> list[str]:
    """pytest-xdist's arguments for `dev.py test`, unless ``argv`` chooses: one worker
    more than the cores (at least two, at most MAX_TEST_WORKERS). Which tests must share
    a worker is tests/conftest.py's (SERIAL_GROUPS)."""
    for argument in argv:
        if argument.startswith(_OWN_WORKERS) or argument in _IN_THIS_PROCESS:
            return []
    workers = min(max((os.cpu_count() or 1) + 1, 2), MAX_TEST_WORKERS)
    return ["-n", str(workers)]


def test(argv: list[str]) -> int:
    env = base_env()
    ensure_venv(env)
    # pytest-django prefers this variable over pyproject.toml: the tests must run
    # on config.test_settings whatever the caller's shell has set.
    env.pop("DJANGO_SETTINGS_MODULE", None)
    # pytest keeps each test module's rewritten asserts in __pycache__ (git-ignored);
    # without them every run, and every worker, rewrites some 560 modules again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [str(venv_python()), "-m", "pytest", *test_workers(argv), *argv]
    try:
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130


def setup(argv: list[str]) -> int:
    if argv:
        fail(f"setup takes no arguments, got {' '.join(argv)}", 2)
    ensure_venv(base_env())
    say(f"ready: {venv_python()}")
    return 0


def manage_command(argv: list[str]) -> int:
    if not argv:
        fail("manage needs a manage.py command, for example: manage token_create writer", 2)
    completed = subprocess.run(manage(*argv), cwd=ROOT, env=demo_env(), check=False)
    return completed.returncode


COMMANDS = {"demo": demo, "test": test, "setup": setup, "manage": manage_command}


def main(argv: list[str]) -> int:
    if sys.version_info < MIN_PYTHON:
        fail(f"agentdocs needs Python {'.'.join(map(str, MIN_PYTHON))} or newer")
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
