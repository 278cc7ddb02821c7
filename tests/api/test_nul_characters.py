"""A NUL character names nothing and no value can hold one: wherever it comes in,
the URL, the query string or the body, the answer is a 400 naming the field, and
nothing is written."""

from __future__ import annotations

import pytest

from agentdocs.models import Document, Project, Recipe

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
P = T + "/projects/web"


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/tenants/ac%00me/", "tenant"),
        (T + "/projects/w%00eb/documents/", "project"),
        (P + "/documents/a%00b.md", "path"),
        (T + "/recipes/a%00b", "name"),
        (T + "/members/a%00b", "username"),
        (P + "/memory-block/?recipe=a%00b", "recipe"),
        (P + "/documents/?prefix=a%00b", "prefix"),
        (P + "/bindings/?process=a%00b", "process"),
        ("/api/v1/no-such%00thing", "url"),
    ],
)
def test_a_nul_in_the_url_is_refused_naming_the_part(api, admin, project, url, field):
    response = api(admin).get(url)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        (P + "/documents/", {"path": "x.md", "body": "b", "reason": "a\x00b"}, "reason"),
        (P + "/documents/", {"path": "x.md", "body": "a\x00b"}, "body"),
        (T + "/projects/", {"slug": "x", "name": "a\x00b"}, "name"),
        (T + "/recipes/", {"name": "r", "params": {"note": ["ok", "a\x00b"]}}, "params.note.1"),
        (T + "/recipes/", {"name": "r", "params": {"a\x00b": 1}}, "params.ab"),
        (P + "/memory-block/", {"process": "p", "recipe": "a\x00b"}, "recipe"),
        (
            P + "/memory-block/",
            {"process": "p", "client_document": {"name": "x.md", "body": "a\x00b"}},
            "client_document.body",
        ),
    ],
)
def test_a_nul_in_the_body_is_refused_naming_the_field_and_nothing_is_written(
    api, admin, project, url, body, field
):
    before = (Document.objects.count(), Project.objects.count(), Recipe.objects.count())
    response = api(admin).post(url, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert (Document.objects.count(), Project.objects.count(), Recipe.objects.count()) == before


def test_a_nul_in_a_form_body_is_refused_too(api, admin, project):
    response = api(admin).post(P + "/documents/", {"path": "x.md", "body": "a\x00b"})
    assert response.status_code == 400
    assert response.json()["field"] == "body"
    assert not Document.objects.filter(path="x.md").exists()


def test_an_encoded_percent_sign_is_not_a_nul(api, admin, project):
    response = api(admin).get(P + "/documents/?prefix=%2500")
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_pages_refuse_a_nul_in_the_url_with_a_400(client, admin, project):
    client.force_login(admin)
    assert client.get("/t/acme/web/doc/a%00b.md").status_code == 400
    assert client.get("/t/acme/web/diff/agent.md?from=1%00").status_code == 400
