"""Input no value here can hold gets a 400 naming the field, and nothing is written:
a NUL character (in the URL, the query string or the body), a lone surrogate, a body
nested past any shape the API takes, a number `int` cannot read or the database
cannot store, and a name with a trailing newline."""

from __future__ import annotations

import json

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
        (P + "/documents/?%00=1", "query"),
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
        (T + "/recipes/", {"name": "r", "params": {"note": ["ok", "a\x00b"]}}, "params.note[1]"),
        (T + "/recipes/", {"name": "r", "params": {"a\x00b": 1}}, "params"),
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


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        (P + "/documents/", {"path": "x.md", "body": "b", "reason": "\ud800"}, "reason"),
        (P + "/documents/", {"path": "x.md", "body": "ok \udfff"}, "body"),
        (P + "/bindings/", {"process": "\ud800"}, "process"),
        (
            P + "/bindings/",
            {"process": "p", "manifest": {"context": [{"name": "\ud800"}]}},
            "manifest.context[0].name",
        ),
        (T + "/providers/team.doc", {"project": "web", "path": "\ud800.md"}, "path"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_the_field(api, admin, project, url, body, field):
    client = api(admin)
    send = client.put if "/providers/" in url else client.post
    # json.dumps escapes the surrogate as \\ud800, as a client's JSON library would.
    response = send(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert "UTF-8" in response.json()["detail"]
    assert not Document.objects.filter(path="x.md").exists()


def test_a_body_nested_past_any_shape_the_api_takes_is_refused(api, admin, project):
    client = api(admin)
    for depth in (70, 50_000):  # past the limit, and past Python's recursion limit
        body = "[" * depth + "]" * depth
        response = client.post(
            P + "/bindings/",
            f'{{"process": "p", "manifest": {body}}}',
            content_type="application/json",
        )
        assert response.status_code == 400, (depth, response.content)
        assert response.json()["error"] == "invalid"
        assert "nested" in response.json()["detail"]


def test_a_stored_manifest_nested_too_deeply_is_a_json_error_naming_it(
    api, admin, project, make_document
):
    make_document(project, "context.json", "[" * 50_000 + "]" * 50_000)
    response = api(admin).post(P + "/bindings/", {"process": "p"}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "manifest"


@pytest.mark.parametrize(
    "value", ["\u00b2", "\u0661", "+1", " 1", "0", "99999999999999999999", "1" * 5000]
)
def test_numbers_are_ascii_digits_in_the_columns_range(api, admin, project, make_document, value):
    make_document(project, "notes.md", "v1")
    client = api(admin)
    for url, field in [
        (P + f"/bindings/{value}", "record"),
        (P + f"/bindings/{value}/outdated", "record"),
        (P + f"/history/notes.md?version={value}", "version"),
        (P + f"/diff/notes.md?from={value}&to=1", "from"),
    ]:
        response = client.get(url)
        assert response.status_code == 400, (url, response.content)
        assert response.json()["field"] == field
    for headers, body in [
        ({"HTTP_IF_MATCH": f'"v{value}"'}, {"body": "v2"}),
        ({}, {"body": "v2", "version": value}),
    ]:
        response = client.put(P + "/documents/notes.md", body, format="json", **headers)
        assert response.status_code == 400, (headers, body, response.content)
    assert Document.objects.get(path="notes.md").version == 1


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/tenants/", {"slug": "newco\n", "name": "New"}, "slug"),
        (T + "/projects/", {"slug": "site\n", "name": "Site"}, "slug"),
        (T + "/recipes/", {"name": "coder\n", "params": {}}, "name"),
        (
            P + "/bindings/",
            {"process": "p", "manifest": {"context": [{"name": "team/x\n", "standing": "rule"}]}},
            "manifest.context[0].name",
        ),
    ],
)
def test_a_name_with_a_trailing_newline_is_refused(api, admin, project, settings, url, body, field):
    settings.AGENTDOCS_TENANT_CREATORS = "authenticated"
    response = api(admin).post(url, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Project.objects.filter(slug="site\n").exists()
    assert not Recipe.objects.filter(name="coder\n").exists()


def test_pages_read_only_ascii_digits_as_numbers(client, admin, project, make_document):
    make_document(project, "notes.md", "v1")
    client.force_login(admin)
    assert client.get("/t/acme/web/history/notes.md?page=\u00b2").status_code == 200
    assert client.get("/t/acme/web/diff/notes.md?from=\u00b2&to=1").status_code == 404


def test_a_body_past_the_servers_read_limit_is_a_json_413_and_changes_nothing(
    api, writer, project, make_document, settings
):
    make_document(project, "a.md", "x")
    too_big = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
    response = api(writer).put(
        P + "/documents/a.md",
        json.dumps({"body": "y" * too_big, "version": 1}),
        content_type="application/json",
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert Document.objects.get(path="a.md").version == 1


@pytest.mark.parametrize("path", ["a//b.md", "%20a.md", "a%5Cb.md", "x" * 300, "%01x.md"])
@pytest.mark.parametrize("page", ["doc", "edit", "history", "diff"])
def test_pages_answer_a_malformed_document_path_with_a_400_saying_what(
    client, admin, project, page, path
):
    client.force_login(admin)
    response = client.get(f"/t/acme/web/{page}/{path}")
    assert response.status_code == 400
    assert "path" in response.content.decode().lower()


def test_an_outsider_still_gets_404_for_a_malformed_path(client, outsider, project):
    client.force_login(outsider)
    assert client.get("/t/acme/web/doc/a//b.md").status_code == 404


@pytest.mark.parametrize("page", ["99999999999999999999", "2147483647", "\u00b2"])
def test_pages_and_lists_survive_any_page_number(api, client, admin, project, make_document, page):
    make_document(project, "notes.md", "v1")
    client.force_login(admin)
    assert client.get(f"/t/acme/web/bindings/?page={page}").status_code == 200
    assert client.get(f"/t/acme/web/history/notes.md?page={page}").status_code == 200
    response = api(admin).get(P + f"/documents/?page={page}")
    assert response.status_code == 404
    assert response.json()["field"] == "page"
