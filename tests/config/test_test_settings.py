"""Each test process takes Redis databases of its own (`config/test_settings.py`): a
worker of pytest-xdist always, one process when AGENTDOCS_TEST_REDIS_DB says where."""

from __future__ import annotations

import os

import pytest

from config.test_settings import _worker_services

VARIABLES = (
    "PYTEST_XDIST_WORKER",
    "AGENTDOCS_TEST_WORKER_SERVICES",
    "AGENTDOCS_TEST_REDIS_DB",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "CELERY_TASK_DEFAULT_QUEUE",
)


@pytest.fixture
def environment(monkeypatch):
    """A process's environment as CI starts the run (the variables are put back after)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1")
    return monkeypatch


def _databases() -> tuple[str, str]:
    return os.environ["REDIS_URL"], os.environ["CELERY_BROKER_URL"]


def test_one_process_keeps_the_databases_it_is_given(environment):
    _worker_services()
    assert _databases() == ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/1")
    assert "AGENTDOCS_TEST_WORKER_SERVICES" not in os.environ


def test_one_process_takes_worker_0s_databases_from_agentdocs_test_redis_db(environment):
    environment.setenv("AGENTDOCS_TEST_REDIS_DB", "7")
    _worker_services()
    assert _databases() == ("redis://127.0.0.1:6379/7", "redis://127.0.0.1:6379/8")
    # A process a test starts loads the settings again and keeps them.
    _worker_services()
    assert _databases() == ("redis://127.0.0.1:6379/7", "redis://127.0.0.1:6379/8")


def test_a_worker_takes_its_own_past_the_given_ones_or_from_agentdocs_test_redis_db(
    environment,
):
    environment.setenv("PYTEST_XDIST_WORKER", "gw2")
    _worker_services()
    assert _databases() == ("redis://127.0.0.1:6379/6", "redis://127.0.0.1:6379/7")

    for name in VARIABLES:
        environment.delenv(name, raising=False)
    environment.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    environment.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1")
    environment.setenv("AGENTDOCS_TEST_REDIS_DB", "7")
    # xdist's controller loads the settings first; its workers inherit what it did.
    _worker_services()
    environment.setenv("PYTEST_XDIST_WORKER", "gw1")
    _worker_services()
    assert _databases() == ("redis://127.0.0.1:6379/9", "redis://127.0.0.1:6379/10")
    _worker_services()  # a process the worker starts
    assert _databases() == ("redis://127.0.0.1:6379/9", "redis://127.0.0.1:6379/10")


def test_a_broker_that_is_not_redis_gets_a_queue_per_worker_only(environment):
    environment.setenv("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
    environment.setenv("AGENTDOCS_TEST_REDIS_DB", "7")
    _worker_services()
    assert "CELERY_TASK_DEFAULT_QUEUE" not in os.environ
    assert os.environ["REDIS_URL"] == "redis://127.0.0.1:6379/7"
    environment.setenv("PYTEST_XDIST_WORKER", "gw0")
    _worker_services()
    assert os.environ["CELERY_TASK_DEFAULT_QUEUE"] == "celery-gw0"
    assert os.environ["REDIS_URL"] == "redis://127.0.0.1:6379/7"
