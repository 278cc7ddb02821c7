"""In Chromium, no page of the demo-like cast breaks the Content-Security-Policy:
every violation a page reports (an event, and the console line Chromium writes) fails."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import BindingRecord
from tests.browser.test_documents_in_chromium import acme  # noqa: F401  the demo-like data

pytestmark = pytest.mark.django_db(transaction=True)

P = "/t/acme/web/"

PAGES = [
    "/",
    "/t/acme/",
    "/t/acme/-/settings/",
    "/t/acme/-/recipes/",
    "/t/acme/-/recipes/new/",
    "/t/acme/-/recipes/coder/",
    "/t/acme/-/recipes/coder/delete/",
    "/t/acme/_vance/",
    P,
    P + "new/",
    P + "settings/",
    P + "memory-block/",
    P + "memory-block/?recipe=coder&profile=cli",
    P + "bindings/",
    P + "bindings/{record}/",
    P + "bindings/{record}/reconstruct/",
    P + "bindings/compare/?a={record}&b={record}",
    P + "doc/agent.md",
    P + "edit/agent.md",
    P + "history/agent.md",
    P + "diff/agent.md?from=1&to=3",
    P + "revert/agent.md?version=1",
    P + "delete/agent.md",
    P + "doc/.AGENTS/overview.md",
    # Activity and history.
    "/t/acme/-/activity/",
    "/t/acme/-/activity/?kind=nope",
    "/t/acme/-/history/settings/memory.language/",
    "/t/acme/-/history/recipes/coder/",
    "/t/acme/-/history/members/carol/",
    "/t/acme/nope/",  # the 404 page
    "/api/docs/",
]

# Recording starts before any page script runs, so a violation at load time counts.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


@pytest.fixture
def record(api, admin, acme, project, make_document):  # noqa: F811
    make_document(project, "context.json", json.dumps({"local": ["agent.md"]}))
    response = api(admin).post(
        "/api/v1/tenants/acme/projects/web/bindings/", {"process": "run-1"}, format="json"
    )
    assert response.status_code == 201, response.content
    return BindingRecord.objects.get().pk


def test_no_page_reports_a_content_security_policy_violation(signed_in, admin, record):
    page = signed_in(admin)
    page.add_init_script(RECORD_VIOLATIONS)
    console: list[str] = []
    page.on(
        "console",
        lambda message: (
            console.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    for url in [*PAGES, "/login/"]:
        url = url.format(record=record)
        if url == "/login/":
            page.context.clear_cookies()
        response = page.goto(url)
        assert response is not None and "content-security-policy" in response.headers, url
        page.wait_for_load_state("networkidle")
        if url == P + "edit/agent.md":  # the live preview swaps in HTML through htmx
            editor = page.get_by_label("Markdown")
            editor.fill(editor.input_value() + "\n## More\n")
            page.locator("#preview h2", has_text="More").wait_for()
        if url == "/api/docs/":  # Swagger UI still starts and reads the schema
            page.locator(".swagger-ui .title", has_text="agentdocs API").wait_for()
        violations = page.evaluate("window.__cspViolations")
        assert violations == [] and console == [], (url, violations, console)
