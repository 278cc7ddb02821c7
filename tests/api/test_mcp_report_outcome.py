"""The MCP tool `report_outcome`, on the web app's `/mcp/` and on `agentdocs mcp`
(stdio, over the REST API): the same outcomes, refusals and scopes."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from agentdocs.models import Outcome, Scope
from agentdocs.services import tokens as token_service
from tests.api.test_mcp_http import bearer, drive
from tests.cli.test_mcp import drive as drive_stdio
from tests.cli.test_mcp import error_of
from tests.conftest import api_token_key
from tests.outcome_runs import bound_run

OUTCOMES = [
    {"name": "task_success", "value": True},
    {"name": "cost_usd", "value": 0.31, "unit": "USD", "comment": "one retry"},
    {"name": "review_rounds", "value": 2},
]


@pytest.fixture
def run(project, reader):
    return bound_run(project, "agent-9", label="canary")


def call(*arguments: dict[str, Any]):
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("report_outcome", given) for given in arguments]

    return body


def test_report_outcome_on_the_web_endpoint_records_and_corrects(live_server, run, reader):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    first, again = drive(
        url,
        call(
            {"process": "agent-9", "outcomes": OUTCOMES},
            {"process": "agent-9", "outcomes": [{"name": "task_success", "value": False}]},
        ),
        headers=bearer(api_token_key(reader)),
    )
    assert not first.is_error
    made = first.structured_content["outcomes"]
    assert [(o["name"], o["value"], o["binding"]) for o in made] == [
        ("task_success", True, run.pk),
        ("cost_usd", 0.31, run.pk),
        ("review_rounds", 2, run.pk),
    ]
    refused = error_of(again)
    assert (refused["error"], refused["field"]) == ("already_exists", "outcomes.0.supersedes")
    stored = Outcome.objects.get(name="cost_usd")
    assert (stored.unit, stored.comment, stored.reported_by.username) == (
        "USD",
        "one retry",
        "carol",
    )
    assert stored.reported_with is not None

    (fixed,) = drive(
        url,
        call(
            {
                "process": "agent-9",
                "outcomes": [{"name": "task_success", "value": False, "supersedes": made[0]["id"]}],
            }
        ),
        headers=bearer(api_token_key(reader)),
    )
    assert fixed.structured_content["outcomes"][0]["supersedes"] == made[0]["id"]
    assert Outcome.objects.filter(name="task_success").count() == 2


def test_a_read_token_may_not_report_and_a_bad_name_is_named(live_server, run, reader):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    read_only = token_service.token_create(user=reader, name="r", scopes=[Scope.READ]).key
    (refused,) = drive(
        url,
        call({"process": "agent-9", "outcomes": [{"name": "a", "value": 1}]}),
        headers=bearer(read_only),
    )
    assert error_of(refused)["error"] == "insufficient_scope"
    (bad,) = drive(
        url,
        call({"process": "agent-9", "outcomes": [{"name": "Not A Name", "value": 1}]}),
        headers=bearer(api_token_key(reader)),
    )
    assert error_of(bad)["field"] == "outcomes.0.name"
    assert Outcome.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_report_outcome_over_stdio_goes_through_the_rest_api(live_server, run, reader):
    (result,) = drive_stdio(
        api_token_key(reader),
        live_server.url,
        call({"process": "agent-9", "outcomes": OUTCOMES[:1]}),
    )
    assert not result.is_error
    assert result.structured_content["outcomes"][0]["name"] == "task_success"
    assert Outcome.objects.get().binding_id == run.pk
