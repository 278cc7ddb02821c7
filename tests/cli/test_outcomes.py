"""`agentdocs outcome`, run as a subprocess against a live server."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import Outcome
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key
from tests.outcome_runs import bound_run


@pytest.fixture
def server(live_server, project, reader):
    bound_run(project, "ci-7", label="canary")
    return {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": api_token_key(reader),
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }


@pytest.mark.django_db(transaction=True)
def test_outcomes_are_reported_by_process_with_kinds_and_units(server, tmp_path):
    result = run_cli(
        "outcome",
        "--process",
        "ci-7",
        "--unit",
        "tokens",
        "task_success=TRUE",
        "tests_passed=0.92:ratio",
        "tokens_in=48211",
        "cost_usd=0.31:USD",
        cwd=tmp_path,
        env=server,
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)["outcomes"]
    assert [(o["name"], o["value"], o["unit"]) for o in shown] == [
        ("task_success", True, "tokens"),
        ("tests_passed", 0.92, "ratio"),
        ("tokens_in", 48211, "tokens"),
        ("cost_usd", 0.31, "USD"),
    ]
    stored = Outcome.objects.get(name="task_success")
    assert (stored.is_bool, stored.value, stored.reported_by.username) == (True, 1.0, "carol")
    assert stored.reported_with is not None

    # Again: refused (1), the reason and field on stderr; corrected with --supersedes.
    again = run_cli("outcome", "--process", "ci-7", "task_success=false", cwd=tmp_path, env=server)
    assert again.returncode == 1
    assert "supersedes" in again.stderr.decode() and "HTTP 409" in again.stderr.decode()
    fixed = run_cli(
        "outcome",
        "--process",
        "ci-7",
        "--supersedes",
        str(stored.pk),
        "task_success=false",
        cwd=tmp_path,
        env=server,
    )
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["outcomes"][0]["supersedes"] == stored.pk


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "arguments",
    [
        ("--process", "ci-7", "task_success"),
        ("--process", "ci-7", "task_success=maybe"),
        ("--process", "ci-7", "--supersedes", "1", "a=1", "b=2"),
        ("task_success=true",),
    ],
)
def test_usage_errors_exit_2_and_send_nothing(server, tmp_path, arguments):
    result = run_cli("outcome", *arguments, cwd=tmp_path, env=server)
    assert result.returncode == 2, result.stderr
    assert Outcome.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_an_unknown_process_is_refused_with_exit_1(server, tmp_path):
    result = run_cli("outcome", "--process", "nobody", "a=1", cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert "field process" in result.stderr.decode()
