"""Every page a member is refused says what is true of the refusal (issue 25): a change
to what they may read is "You may read this, but not change it"; a page only tenant
admins may open (which the member may not read either) is "For tenant admins only";
one place decides (`agentdocs.web.pages.refusal_heading`). Outsiders get 404."""

from __future__ import annotations

import pytest

from agentdocs.services import policy as policy_service
from agentdocs.services import webhooks as webhook_service

pytestmark = pytest.mark.django_db

MAY_READ = "You may read this, but not change it"
ADMINS_ONLY = "For tenant admins only"


@pytest.fixture
def cast(tenant, project, vance, admin, agent_md, vance_md):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    created = webhook_service.webhook_create(
        tenant=tenant,
        url="https://hooks.example.com/agentdocs",
        events=["document.updated"],
        projects=None,
        user=admin,
    )
    return {"webhook": created.webhook.pk}


# (who, method, page, heading, what the member reads instead: a page that answers 200)
REFUSALS = [
    ("writer", "get", "/t/acme/-/webhooks/", ADMINS_ONLY, None),
    ("writer", "get", "/t/acme/-/webhooks/{webhook}/", ADMINS_ONLY, None),
    ("writer", "get", "/t/acme/-/history/members/reader/", ADMINS_ONLY, None),
    ("writer", "get", "/t/acme/-/recipes/new/", ADMINS_ONLY, "/t/acme/-/recipes/"),
    ("writer", "get", "/t/acme/-/recipes/coder/delete/", ADMINS_ONLY, "/t/acme/-/recipes/coder/"),
    ("writer", "post", "/t/acme/-/settings/", ADMINS_ONLY, "/t/acme/-/settings/"),
    ("writer", "get", "/t/acme/_vance/edit/agent.md", MAY_READ, "/t/acme/_vance/doc/agent.md"),
    ("reader", "get", "/t/acme/web/edit/agent.md", MAY_READ, "/t/acme/web/doc/agent.md"),
    ("reader", "get", "/t/acme/web/new/", MAY_READ, "/t/acme/web/"),
    (
        "reader",
        "get",
        "/t/acme/web/revert/agent.md?version=1",
        MAY_READ,
        "/t/acme/web/history/agent.md",
    ),
    ("reader", "get", "/t/acme/web/delete/agent.md", MAY_READ, "/t/acme/web/doc/agent.md"),
]


def _heading(html: str) -> str:
    start = html.index('<div class="card-body empty">')
    return html[start:].split("<strong>", 1)[1].split("</strong>", 1)[0]


@pytest.mark.parametrize(("who", "method", "url", "heading", "readable"), REFUSALS)
def test_a_refusal_is_headed_with_what_is_true(
    browse, request, cast, outsider, other_tenant, who, method, url, heading, readable
):
    url = url.format(**cast)
    member = browse(request.getfixturevalue(who))

    response = getattr(member, method)(url)

    assert response.status_code == 403
    html = response.content.decode()
    assert _heading(html) == heading
    if heading == MAY_READ:
        assert member.get(readable).status_code == 200  # the page says they may: they may
    else:
        assert MAY_READ not in html
        if readable is None:  # not even readable: the refusal says who it is for
            assert "Only tenant admins see" in html
    assert getattr(browse(outsider), method)(url).status_code == 404


def test_djangos_own_refusals_claim_nothing(browse, writer):
    """The admin site's 403 (a member who is not staff) uses the same page, headed
    plainly."""
    writer.is_staff = True
    writer.save()
    response = browse(writer).get("/admin/auth/user/")

    assert response.status_code == 403
    html = response.content.decode()
    assert MAY_READ not in html and "Not allowed" in html
