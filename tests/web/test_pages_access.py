"""Who sees what: sign-in, the home page, and 404 for outsiders on every page."""

from __future__ import annotations

import logging
import logging.config
import sys

import pytest
from django.conf import settings

from config.log import without_client_error_tracebacks

pytestmark = pytest.mark.django_db

PROJECT_PAGES = [
    "/t/acme/web/",
    "/t/acme/web/doc/agent.md",
    "/t/acme/web/edit/agent.md",
    "/t/acme/web/history/agent.md",
    "/t/acme/web/diff/agent.md",
    "/t/acme/web/revert/agent.md?version=1",
    "/t/acme/web/delete/agent.md",
    "/t/acme/web/new/",
    "/t/acme/web/settings/",
    "/t/acme/web/memory-block/",
    "/t/acme/",
    "/t/acme/-/settings/",
    "/t/acme/-/recipes/",
    "/t/acme/-/recipes/new/",
]


def test_signed_out_visitors_are_sent_to_sign_in(client, agent_md):
    for url in ["/", *PROJECT_PAGES]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/login/?next="), url


def test_sign_in_and_out(client, writer, tenant):
    page = client.get("/login/")
    assert page.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in page.content
    wrong = client.post("/login/", {"username": "bob", "password": "nope"})
    assert b"do not match" in wrong.content
    response = client.post("/login/", {"username": "bob", "password": "bob-password"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert b"Acme" in client.get("/").content
    signed_out = client.post("/logout/")
    assert signed_out.status_code == 302
    assert client.get("/").status_code == 302


def test_home_lists_only_the_users_tenants_and_projects(browse, writer, project, other_tenant):
    page = browse(writer).get("/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Acme" in text and "/t/acme/web/" in text and "/t/acme/_vance/" in text
    assert "Globex" not in text and "globex" not in text


@pytest.mark.parametrize("url", PROJECT_PAGES)
def test_outsiders_get_404_on_every_page(browse, outsider, other_tenant, agent_md, url):
    assert browse(outsider).get(url).status_code == 404


def test_unknown_tenant_and_known_tenant_look_the_same_to_outsiders(browse, outsider, project):
    known = browse(outsider).get("/t/acme/web/")
    unknown = browse(outsider).get("/t/nosuch/web/")
    assert known.status_code == unknown.status_code == 404


def test_outsider_posts_are_404_and_write_nothing(browse, outsider, other_tenant, agent_md):
    response = browse(outsider).post(
        "/t/acme/web/edit/agent.md", {"body": "pwned", "base_version": 1, "reason": ""}
    )
    assert response.status_code == 404
    agent_md.refresh_from_db()
    assert agent_md.version == 1 and "pwned" not in agent_md.body


def test_every_form_carries_a_csrf_token(browse, admin, agent_md, vance_md):
    client = browse(admin)
    for url in [
        "/t/acme/web/edit/agent.md",
        "/t/acme/web/new/",
        "/t/acme/web/revert/agent.md?version=1",
        "/t/acme/web/delete/agent.md",
        "/t/acme/-/settings/",
        "/t/acme/-/recipes/new/",
    ]:
        text = client.get(url).content.decode()
        assert text.count("<form") >= 1, url
        assert text.count('name="csrfmiddlewaretoken"') >= text.count('method="post"'), url


def test_a_post_without_the_csrf_token_is_refused(browse, writer, agent_md):
    client = browse(writer, csrf_checks=True)
    response = client.post(
        "/t/acme/web/edit/agent.md", {"body": "changed", "base_version": 1, "reason": "x"}
    )
    assert response.status_code == 403
    agent_md.refresh_from_db()
    assert agent_md.version == 1


def test_the_htmx_preview_needs_the_csrf_token_too(browse, writer, project):
    client = browse(writer, csrf_checks=True)
    assert client.post("/t/acme/web/preview/", {"body": "# hi"}).status_code == 403
    page = client.get("/t/acme/web/new/")
    token = page.cookies["csrftoken"].value
    ok = client.post("/t/acme/web/preview/", {"body": "# hi"}, HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200 and b"<h1>hi</h1>" in ok.content


def test_the_403_page_shows_quoted_names_as_code_not_backticks(browse, writer, vance):
    response = browse(writer).get("/t/acme/_vance/new/")

    text = response.content.decode()
    assert response.status_code == 403
    assert "<code>_vance</code>" in text and "`" not in text


def test_the_favicon_is_served(client, browse, reader, tenant):
    from django.contrib.staticfiles import finders

    response = client.get("/favicon.ico")

    assert response.status_code == 302
    assert response["Location"] == "/static/agentdocs/favicon.svg"
    assert finders.find("agentdocs/favicon.svg")
    home = browse(reader).get("/").content.decode()
    assert 'rel="icon" href="/static/agentdocs/favicon.svg"' in home


def test_an_ordinary_refusal_logs_one_line_without_a_traceback(browse, writer, vance, capsys):
    logging.config.dictConfig(settings.LOGGING)  # its console handler now writes to capsys
    try:
        assert browse(writer).get("/t/acme/_vance/new/").status_code == 403
        assert browse(writer).get("/t/acme/nothing-here/").status_code == 404
        logged = capsys.readouterr().err
    finally:
        with capsys.disabled():  # back to the real stderr for the tests that follow
            logging.config.dictConfig(settings.LOGGING)
    assert logged.count("Forbidden (Permission denied): /t/acme/_vance/new/") == 1
    assert logged.count("Not Found: /t/acme/nothing-here/") == 1
    assert "Traceback" not in logged


def test_a_server_error_keeps_its_traceback():
    def record(status: int) -> logging.LogRecord:
        try:
            raise ValueError("boom")
        except ValueError:
            made = logging.LogRecord("django.request", 40, "", 0, "x", (), sys.exc_info())
        made.status_code = status
        return made

    server_error, refusal = record(500), record(404)

    assert without_client_error_tracebacks(server_error) and server_error.exc_info
    assert without_client_error_tracebacks(refusal) and refusal.exc_info is None
