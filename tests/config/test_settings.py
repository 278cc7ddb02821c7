"""Production settings: `check --deploy` passes, bad configuration fails loudly, and
docker-compose.yml runs the five services with the variables settings.py reads.

Docker itself does not run on the CI machine, so the compose file and the
Dockerfile are checked for structure, not built.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "config" / "settings.py"
COMPOSE = ROOT / "docker-compose.yml"
APP_SERVICES = ("web", "worker", "beat")

_ENV_READ = re.compile(
    r"""(?:env_\w+\(|os\.environ\.get\(|os\.getenv\(|os\.environ\[)\s*["']([A-Z][A-Z0-9_]*)["']"""
)


def settings_environment_variables() -> set[str]:
    """Every environment variable config/settings.py reads, found in its source."""
    return set(_ENV_READ.findall(SETTINGS.read_text()))


def run_manage(*args: str, **environment: str) -> subprocess.CompletedProcess:
    """Run manage.py in a fresh interpreter with only ``environment`` for settings.

    The test process itself runs on config.test_settings, which sets some of these
    variables; they must not leak into a check of production settings.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in settings_environment_variables() and name != "DJANGO_SETTINGS_MODULE"
    }
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env.update(environment)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_settings_source_is_understood():
    names = settings_environment_variables()

    assert {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS"} <= names


def test_check_deploy_passes_with_production_settings(tmp_path):
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="0",
        ALLOWED_HOSTS="example.com",
        DATABASE_URL=f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_settings_refuse_to_start_without_a_secret_key():
    result = run_manage("check", DEBUG="0", ALLOWED_HOSTS="example.com")

    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_an_empty_secret_key_is_refused_too():
    result = run_manage("check", SECRET_KEY="")

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [("DEBUG", "yse"), ("SECURE_SSL_REDIRECT", "maybe"), ("AGENTDOCS_LOCK_TTL_SECONDS", "ten")],
)
def test_a_bad_value_fails_loudly_and_names_the_variable(name, value):
    result = run_manage("check", SECRET_KEY=secrets.token_urlsafe(50), **{name: value})

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert name in result.stderr and repr(value) in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "least"),
    [
        ("AGENTDOCS_LOGIN_FAILURE_LIMIT", "0", 1),
        ("AGENTDOCS_LOGIN_COOLOFF_MINUTES", "0", 1),
        ("AGENTDOCS_TRUSTED_PROXIES", "-1", 0),
    ],
)
def test_a_sign_in_throttle_setting_below_its_least_is_refused(name, value, least):
    result = run_manage("check", SECRET_KEY=secrets.token_urlsafe(50), **{name: value})

    assert result.returncode != 0
    assert f"{name} must be at least {least}, not {value}." in result.stderr


@pytest.mark.parametrize("name", ["AGENTDOCS_ARCHIVE_BATCH_SIZE", "AGENTDOCS_ARCHIVE_DRAINS"])
def test_an_archival_setting_below_one_is_refused(name):
    result = run_manage("check", SECRET_KEY=secrets.token_urlsafe(50), **{name: "0"})

    assert result.returncode != 0
    assert f"{name} must be at least 1." in result.stderr


def test_compose_runs_the_five_services(compose):
    services = compose["services"]

    assert set(services) == {"postgres", "redis", "web", "worker", "beat"}
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    for name in APP_SERVICES:
        assert services[name]["build"] == "."
        assert set(services[name]["depends_on"]) == {"postgres", "redis"}


def test_compose_web_migrates_and_collects_static_before_gunicorn(compose):
    command = " ".join(compose["services"]["web"]["command"])

    migrate = command.index("manage.py migrate")
    collectstatic = command.index("manage.py collectstatic")
    gunicorn = command.index("gunicorn config.wsgi")
    assert migrate < collectstatic < gunicorn
    assert "&&" in command  # a failed migration stops the start


def test_compose_worker_and_beat_run_celery(compose):
    services = compose["services"]

    assert " ".join(services["worker"]["command"]).startswith("celery -A config worker")
    assert " ".join(services["beat"]["command"]).startswith("celery -A config beat")


def test_every_variable_compose_sets_is_one_settings_reads(compose):
    read = settings_environment_variables()

    for name in APP_SERVICES:
        environment = compose["services"][name]["environment"]
        unknown = set(environment) - read
        assert not unknown, f"{name} sets variables settings.py never reads: {sorted(unknown)}"
        assert {
            "DATABASE_URL",
            "REDIS_URL",
            "CELERY_BROKER_URL",
            "SECRET_KEY",
            "DEBUG",
            "ALLOWED_HOSTS",
        } <= set(environment)


def test_compose_has_no_default_secret_key_and_points_at_its_own_services(compose):
    environment = compose["services"]["web"]["environment"]

    assert environment["SECRET_KEY"].startswith("${SECRET_KEY:?")
    assert "@postgres:5432/" in environment["DATABASE_URL"]
    assert environment["REDIS_URL"].startswith("redis://redis:6379/")
    assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379/")


def test_compose_never_passes_an_empty_boolean(compose):
    """Compose always passes explicit booleans, so no deployment depends on how blanks read."""
    environment = compose["services"]["web"]["environment"]

    for name in ("DEBUG", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
        pattern = r"\$\{" + name + r":-[01]\}"
        assert re.fullmatch(pattern, environment[name]), environment[name]


def test_dockerfile_installs_the_package_on_python_311_slim():
    dockerfile = (ROOT / "Dockerfile").read_text()

    assert re.search(r"^FROM python:3\.11-slim\b", dockerfile, re.M)
    assert re.search(r"^RUN pip install /app", dockerfile, re.M)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", ".secret_key", "*.sqlite3"} <= set(ignored)


def test_web_and_worker_share_the_archive_storage(compose):
    """The worker writes binding-record archives; they must outlive its container."""
    media_root = compose["services"]["worker"]["environment"]["MEDIA_ROOT"]
    for name in ("web", "worker"):
        mounts = compose["services"][name]["volumes"]
        assert f"agentdocs-media:{media_root}" in mounts
    assert "agentdocs-media" in compose["volumes"]
