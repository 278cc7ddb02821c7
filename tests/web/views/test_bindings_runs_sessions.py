"""The runs page's agent sessions: the live deliveries of each session among the runs
read (start, resumes, compactions), and one session's deliveries as its own timeline
(`?session=`), with what each sent the agent and whether the tool could use it;
members only, constant queries."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.services import tenancy as tenant_service
from tests.timeline_runs import deliver

URL = "/t/acme/web/runs/"


def _rows(html: str) -> list[str]:
    table = html[html.index('id="session-title"') :]
    table = table[: table.index("</table>")]
    return re.findall(r'<tr class="session-delivery">(.*?)</tr>', table, re.S)


def test_a_session_is_one_timeline_of_its_start_resume_and_compaction(
    browse, reader, tenant, project, writer
):
    start = deliver(tenant, project, writer, "s-1")
    deliver(tenant, project, writer, "other")
    resume = deliver(tenant, project, writer, "s-1", source="resume", block="cache")
    compact = deliver(tenant, project, writer, "s-1", source="compact")

    response = browse(reader).get(URL, {"session": "s-1"})

    assert response.status_code == 200
    html = response.content.decode()
    rows = _rows(html)
    assert len(rows) == 3
    assert "<strong>start</strong>" in rows[0] and "the full block" in rows[0]
    assert f"/t/acme/web/bindings/{start.pk}/" in rows[0]
    assert "<strong>resume</strong>" in rows[1]
    assert "stubs for what the session holds" in rows[1] and "from the cache" in rows[1]
    assert f"/t/acme/web/bindings/{resume.pk}/reconstruct/" in rows[1]
    assert "<strong>compaction</strong>" in rows[2]
    assert "the full block again (read state reset)" in rows[2]
    assert f"/t/acme/web/bindings/{compact.pk}/" in rows[2]
    assert all("badge-ok" in row for row in rows)
    assert "3 deliveries to claude-code, oldest first" in html


def test_a_gemini_start_after_precompress_is_shown_as_the_reset_it_was(
    browse, reader, tenant, project, writer
):
    deliver(tenant, project, writer, "g-1", tool="gemini-cli")
    deliver(
        tenant,
        project,
        writer,
        "g-1",
        tool="gemini-cli",
        event="PreCompress",
        source="auto",
        block="none",
    )
    deliver(tenant, project, writer, "g-1", tool="gemini-cli", source="resume")

    rows = _rows(browse(reader).get(URL, {"session": "g-1"}).content.decode())

    assert "<strong>compaction</strong>" in rows[1] and "PreCompress · auto" in rows[1]
    assert "a notice; the next start resets the read state" in rows[1]
    assert "the full block again (read state reset)" in rows[2]


def test_an_unusable_delivery_is_flagged_in_its_session(browse, reader, tenant, project, writer):
    deliver(tenant, project, writer, "s-2", prefix="Checking for updates...\n")

    html = browse(reader).get(URL, {"session": "s-2"}).content.decode()

    (row,) = _rows(html)
    assert "badge-warn" in row and "unusable" in row
    sessions = html[html.index('id="runs-sessions-title"') :]
    sessions = sessions[: sessions.index("</table>")]
    assert 'href="?session=s-2"' in sessions and "badge badge-warn" in sessions


def test_the_runs_page_lists_the_sessions_among_its_runs(browse, reader, tenant, project, writer):
    deliver(tenant, project, writer, "s-a")
    deliver(tenant, project, writer, "s-b", tool="codex")
    deliver(tenant, project, writer, "s-a", source="compact")

    html = browse(reader).get(URL).content.decode()

    sessions = html[html.index('id="runs-sessions-title"') :]
    sessions = sessions[sessions.index("<tbody>") : sessions.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", sessions, re.S)
    # Newest last delivery first: s-a compacted after s-b started.
    assert 'href="?session=s-a"' in rows[0] and 'href="?session=s-b"' in rows[1]
    assert re.search(r">start</a> → <a[^>]*>compaction</a>", rows[0])
    assert "codex" in rows[1]


def test_a_session_without_deliveries_says_so(browse, reader, tenant, project, writer):
    html = browse(reader).get(URL, {"session": "nobody"}).content.decode()
    assert "No deliveries were recorded for this session." in html
    assert 'href="/docs/delivery/"' in html


def test_a_session_id_too_long_is_a_400_beside_its_field(browse, reader, project):
    response = browse(reader).get(URL, {"session": "s" * 201})
    assert response.status_code == 400
    assert 'id="id_session_error"' in response.content.decode()


def test_an_outsider_gets_404_for_a_session(
    browse, outsider, other_tenant, tenant, project, writer
):
    deliver(tenant, project, writer, "s-3")
    response = browse(outsider).get(URL, {"session": "s-3"})
    assert response.status_code == 404
    assert b"s-3" not in response.content


def test_another_projects_session_is_not_shown(browse, reader, tenant, project, writer, admin):
    other = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    deliver(tenant, other, writer, "s-4")
    html = browse(reader).get(URL, {"session": "s-4"}).content.decode()
    assert "No deliveries were recorded for this session." in html


@pytest.mark.parametrize("count", [3, 15])
def test_a_sessions_page_runs_the_same_queries_whatever_its_deliveries(
    browse, reader, tenant, project, writer, count
):
    for index in range(count):
        deliver(tenant, project, writer, "s-5", source="compact" if index else "startup")
    client = browse(reader)
    client.get(URL, {"session": "s-5"})
    with CaptureQueriesContext(connection) as captured:
        assert client.get(URL, {"session": "s-5"}).status_code == 200
    # session + user + access + the window + the session's deliveries
    assert len(captured) == 5, [q["sql"] for q in captured]
