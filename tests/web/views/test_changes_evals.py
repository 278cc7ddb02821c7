"""The change page: the comparison of the latest evals, base against proposed, what
`review.requireEvals` makes of them, and the agent process a change came from."""

from __future__ import annotations

import html
import re

import pytest

from agentdocs.models import BindingRecord
from agentdocs.services import change_evals as evals_service
from agentdocs.services import changes as change_service
from agentdocs.services import policy as policy_service
from tests.web.views.test_changes import TEXT, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", TEXT, user=writer)


def _propose(project, reader, process: str = ""):
    return change_service.change_propose(
        project=project,
        path="agent.md",
        body=TEXT.replace("Use tabs", "Use spaces"),
        base_version=1,
        reason="spaces read better",
        user=reader,
        process=process,
    )


def _text(page) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode())).split())


def test_the_page_shows_the_comparison_table_of_the_latest_evals(
    browse, project, agent_md, reader, writer
):
    change = _propose(project, reader)
    evals_service.change_evals_attach(
        change=change,
        user=reader,
        harness="rules-harness 1.2",
        cases=[
            {"name": "uses spaces", "base": False, "proposed": True},
            {"name": "ships small", "base": True, "proposed": True},
            {"name": "cites the rule", "base": True, "proposed": False},
            {"name": "no tabs", "base": True, "proposed": True},
        ],
    )
    page = browse(writer).get(url(change))
    assert page.status_code == 200
    text = _text(page)
    assert "rules-harness 1.2, by carol" in text
    assert "4 cases, pass rate 0.75 with the base, 0.75 with the proposal (0.0)" in text
    assert "1 worse, 1 better." in text
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", page.content.decode())
    assert rows == [
        ("uses spaces", "fail", "pass"),
        ("ships small", "pass", "pass"),
        ("cites the rule", "pass", "fail"),
        ("no tabs", "pass", "pass"),
    ]
    assert "not required to merge" in text


def test_under_require_evals_the_page_says_why_and_offers_no_merge(
    browse, tenant, admin, project, agent_md, reader, writer
):
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.requireEvals", value="true", user=admin
    )
    change = _propose(project, reader)
    change_service.change_review(change=change, user=writer, decision="approve")
    text = _text(browse(writer).get(url(change)))
    assert "needs eval results before it merges" in text
    assert "required before merging: at most 0.0 worse than the base" in text
    assert 'value="merge"' not in browse(writer).get(url(change)).content.decode()
    # Merging anyway (a stale page) answers the API's refusal, under its own status.
    refused = browse(writer).post(url(change), {"action": "merge"})
    assert refused.status_code == 409 and "evals_missing" in refused.content.decode()
    evals_service.change_evals_attach(
        change=change,
        user=reader,
        harness="judge",
        cases=[{"name": "tone", "base": 0.5, "proposed": 0.75}],
    )
    page = browse(writer).get(url(change)).content.decode()
    assert 'value="merge"' in page and "mean score" in _text(browse(writer).get(url(change)))


def test_a_change_from_an_agent_names_its_process_and_binding_record(
    browse, project, agent_md, reader
):
    record = BindingRecord.objects.create(
        tenant=project.tenant,
        project=project,
        process="agent-7",
        created_at=agent_md.updated_at,
        schema="context-binding/v1",
        record={},
        problem_count=0,
    )
    change = _propose(project, reader, process="agent-7")
    page = browse(reader).get(url(change)).content.decode()
    assert "from the agent process" in page and "agent-7" in page
    assert f"/t/acme/web/bindings/{record.pk}/" in page
    assert f"binding record #{record.pk}" in page
