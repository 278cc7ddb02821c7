"""No page answers a 500, whatever a member sends: every page, as a tenant admin
(who gets past the permission checks), with query strings and form posts of the
wrong kind. A page may refuse (4xx) or redirect; it may not fail."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import BindingRecord
from agentdocs.services import changes as change_service

pytestmark = pytest.mark.django_db

T = "/t/acme"
P = T + "/web"

PAGES = [
    "/",
    T + "/",
    T + "/-/settings/",
    T + "/-/recipes/",
    T + "/-/recipes/new/",
    T + "/-/recipes/coder/",
    T + "/-/recipes/coder/delete/",
    P + "/",
    P + "/new/",
    P + "/preview/",
    P + "/settings/",
    P + "/memory-block/",
    P + "/bindings/",
    P + "/bindings/compare/",
    P + "/bindings/{record}/",
    P + "/bindings/{record}/reconstruct/",
    P + "/doc/agent.md",
    P + "/edit/agent.md",
    P + "/history/agent.md",
    P + "/diff/agent.md",
    P + "/revert/agent.md",
    P + "/delete/agent.md",
    P + "/lock/agent.md",
    # Change requests (issue 13).
    T + "/-/changes/",
    P + "/changes/new/",
    P + "/changes/new/?path=agent.md",
    P + "/changes/{change}/",
    P + "/changes/{change}/review/",
    P + "/changes/{change}/comment/",
    P + "/changes/{change}/merge/",
    P + "/changes/{change}/withdraw/",
]

QUERIES = [
    "?version=x&page=x&from=x&to=y",
    "?version=%C2%B2&page=%C2%B2&from=%C2%B2&to=%D9%A1",
    "?version=99999999999999999999&page=99999999999999999999&from=0&to=-1",
    "?recipe=%00&profile=x&process=%FF&problems=maybe&a=1&b=99999999999999999999",
    "?recipe=nosuch&profile=nosuch&a=x&b=y",
    "?version=" + "1" * 5000 + "&page=" + "1" * 5000 + "&a=" + "1" * 5000,
]

FORMS = [
    {},
    {"body": "x", "base_version": "x", "version": "x", "reason": "r"},
    {"body": "x", "base_version": "99999999999999999999", "version": "%C2%B2"},
    {"path": "a//b.md", "body": "x", "reason": "r"},
    {"path": "x" * 300, "body": "y" * 300_000},
    {"key": "memory.x\n", "value": "v", "enforced": "maybe"},
    {"key": "memory.tone", "value": "x" * 100_000, "delete": "1"},
    {"name": "coder\n", "params": "{not json", "profiles": "[]"},
    {"name": "r", "params": "[1]", "profiles": '{"p": 5}'},
    {"name": "r", "params": '{"contextBudgetBytes": 99999999999999999999}', "profiles": "{}"},
    {"process": "", "with_memory_block": "on", "recipe": "nosuch", "manifest": "{"},
    {"process": "p", "manifest": json.dumps({"context": "x"}), "a": "1", "b": "x"},
    {"ttl_seconds": "x", "force": "maybe", "release": "1"},
    {"decision": "maybe", "comment": "x" * 20_000, "state": "nope", "bypass_review": "x"},
    {"path": "agent.md", "base_version": "1", "body": "\x00"},
    {"path": "agent.md", "base_version": "99999", "body": "x"},
]


@pytest.fixture
def record(api, admin, project, make_document):
    make_document(project, "agent.md", "# Rules\n")
    make_document(project, "context.json", json.dumps({"local": ["agent.md"]}))
    api(admin).post("/api/v1/tenants/acme/projects/web/bindings/", {"process": "p"}, format="json")
    return BindingRecord.objects.get().pk


@pytest.fixture
def change(record, project, reader):
    return change_service.change_propose(
        project=project, path="agent.md", body="# New\n", base_version=1, reason="", user=reader
    ).pk


@pytest.mark.parametrize("page", PAGES)
def test_no_page_fails_whatever_is_sent(browse, admin, record, change, page):
    client = browse(admin)
    url = page.format(record=record, change=change)
    for query in QUERIES:
        response = client.get(url + query)
        assert response.status_code < 500, (url + query, response.status_code)
    for form in FORMS:
        response = client.post(url, form)
        assert response.status_code < 500, (url, form, response.status_code)
