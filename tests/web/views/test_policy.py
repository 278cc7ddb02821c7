"""Settings and recipes pages: members read, admins change, errors beside the field."""

from __future__ import annotations

import re

import pytest

from agentdocs.models import Recipe, Setting
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db


def test_members_read_settings_but_only_admins_see_the_form(browse, reader, admin, tenant):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.language", value="en", user=admin
    )
    page = browse(reader).get("/t/acme/-/settings/").content.decode()
    assert "memory.language" in page and "Read only" in page
    assert 'name="value"' not in page
    assert 'name="value"' in browse(admin).get("/t/acme/-/settings/").content.decode()


def test_admin_sets_an_enforced_tenant_setting(browse, admin, tenant):
    response = browse(admin).post(
        "/t/acme/-/settings/",
        {"key": "memory.tone", "value": "plain", "enforced": "on", "reason": "house style"},
    )
    assert response.status_code == 302
    setting = Setting.objects.get(tenant=tenant, project=None, key="memory.tone")
    assert setting.value == "plain" and setting.enforced


def test_a_bad_key_is_refused_beside_the_key_field(browse, admin, tenant):
    response = browse(admin).post("/t/acme/-/settings/", {"key": "tone", "value": "plain"})
    text = response.content.decode()
    assert response.status_code == 400
    key_field = text[text.index('for="id_key"') : text.index('for="id_value"')]
    assert "Setting keys start with" in key_field
    assert not Setting.objects.exists()


def test_readers_and_writers_cannot_change_settings(browse, reader, writer, project):
    for user in (reader, writer):
        client = browse(user)
        assert (
            client.post("/t/acme/-/settings/", {"key": "memory.a", "value": "b"}).status_code == 403
        )
        assert (
            client.post("/t/acme/web/settings/", {"key": "memory.a", "value": "b"}).status_code
            == 403
        )
    assert not Setting.objects.exists()


def test_project_settings_show_what_is_in_force_and_refused_overrides(
    browse, admin, reader, tenant, project
):
    # The project's value came first; the tenant enforced its own afterwards.
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="loud", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="plain", enforced=True, user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.lang", value="de", user=admin
    )
    page = browse(reader).get("/t/acme/web/settings/").content.decode()
    assert "project value refused" in page and "<s>loud</s>" in page
    assert "memory.lang" in page


def test_admin_deletes_a_setting(browse, admin, tenant):
    policy_service.setting_set(tenant=tenant, project=None, key="memory.x", value="1", user=admin)
    response = browse(admin).post("/t/acme/-/settings/", {"key": "memory.x", "delete": "1"})
    assert response.status_code == 302
    assert not Setting.objects.exists()


def test_recipes_are_listed_for_members(browse, reader, admin, tenant, project):
    policy_service.recipe_create(
        tenant=tenant, name="summarizer", params={"agentDocument": ""}, profiles={}, user=admin
    )
    page = browse(reader).get("/t/acme/-/recipes/").content.decode()
    assert "summarizer" in page and ">off<" in page
    assert "New recipe" not in page
    detail = browse(reader).get("/t/acme/-/recipes/summarizer/").content.decode()
    assert "processes of this type get no agent notes" in detail
    assert 'name="params"' not in detail
    project_page = browse(reader).get("/t/acme/web/").content.decode()
    assert "summarizer" in project_page and "agent document off" in project_page


def test_admin_creates_a_recipe_and_bad_params_are_shown_beside_the_field(browse, admin, tenant):
    client = browse(admin)
    bad_json = client.post("/t/acme/-/recipes/new/", {"name": "coder", "params": "{nope"})
    assert bad_json.status_code == 400 and "Not valid JSON" in bad_json.content.decode()
    typo = client.post(
        "/t/acme/-/recipes/new/", {"name": "coder", "params": '{"agentDocumnet": "x.md"}'}
    )
    text = typo.content.decode()
    params_field = text[text.index('for="id_params"') : text.index('for="id_profiles"')]
    assert typo.status_code == 400 and "params.agentDocumnet" in params_field
    assert "{&quot;agentDocumnet&quot;: &quot;x.md&quot;}" in text  # the input is kept
    ok = client.post(
        "/t/acme/-/recipes/new/",
        {"name": "coder", "params": '{"agentDocument": "notes/team.md"}', "profiles": ""},
    )
    assert ok.status_code == 302
    assert Recipe.objects.get(name="coder").params == {"agentDocument": "notes/team.md"}


def test_admin_updates_and_deletes_a_recipe(browse, admin, reader, tenant):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    client = browse(admin)
    response = client.post(
        "/t/acme/-/recipes/coder/",
        {"params": "{}", "profiles": '{"cli": {"useClientAgentDoc": true}}', "reason": "cli"},
    )
    assert response.status_code == 302
    assert Recipe.objects.get(name="coder").profiles == {"cli": {"useClientAgentDoc": True}}
    assert browse(reader).post("/t/acme/-/recipes/coder/delete/").status_code == 403
    assert client.post("/t/acme/-/recipes/coder/delete/", {"reason": "gone"}).status_code == 302
    assert not Recipe.objects.exists()


def test_readers_cannot_change_recipes(browse, reader, admin, tenant):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    client = browse(reader)
    assert client.get("/t/acme/-/recipes/new/").status_code == 403
    assert client.post("/t/acme/-/recipes/new/", {"name": "x", "params": "{}"}).status_code == 403
    assert (
        client.post("/t/acme/-/recipes/coder/", {"params": '{"agentDocument": ""}'}).status_code
        == 403
    )
    assert Recipe.objects.get(name="coder").params == {}


def test_a_project_setting_the_tenant_enforces_is_refused_on_the_page(
    browse, admin, tenant, project
):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="plain", enforced=True, user=admin
    )
    response = browse(admin).post(
        "/t/acme/web/settings/", {"key": "memory.tone", "value": "loud", "reason": "try"}
    )
    assert response.status_code == 409
    assert "The tenant enforces memory.tone" in response.content.decode()
    assert not Setting.objects.filter(project=project).exists()


def test_a_second_recipe_of_the_same_name_is_refused_with_its_own_status(browse, admin, tenant):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    response = browse(admin).post(
        "/t/acme/-/recipes/new/", {"name": "coder", "params": '{"agentDocument": ""}'}
    )
    text = response.content.decode()
    assert response.status_code == 409  # AlreadyExists, as the API answers (was 400 here)
    name_field = text[text.index('for="id_name"') : text.index('for="id_params"')]
    assert "already exists" in name_field
    assert Recipe.objects.get(name="coder").params == {}


# What once failed with a 500 on the recipe pages: each is a 400 with the form error.
UNSTORABLE_RECIPE_FORMS = {
    "nul in reason": ({"params": "{}", "reason": "a\x00b"}, "reason", "Null characters"),
    "nul in params": ({"params": '{"agentDocument": "a\\u0000.md"}'}, "params", "NUL"),
    "lone surrogate in params": (
        {"params": '{"agentDocument": "\\ud800.md"}'},
        "params",
        "lone surrogate",
    ),
    "lone surrogate as a profile name": (
        {"params": "{}", "profiles": '{"\\ud800": {}}'},
        "profiles",
        "lone surrogate",
    ),
    "50,000 [": ({"params": "[" * 50_000}, "params", "levels deep"),
    "deeply nested profiles": (
        {"profiles": '{"p": ' + "[" * 100 + "]" * 100 + "}"},
        "profiles",
        "levels deep",
    ),
    "5,000-digit integer": (
        {"params": '{"contextBudgetBytes": ' + "1" * 5000 + "}"},
        "params",
        "more than 100 digits",
    ),
    "NaN": ({"params": '{"contextBudgetBytes": NaN}'}, "params", "NaN"),
}


@pytest.mark.parametrize("case", UNSTORABLE_RECIPE_FORMS)
@pytest.mark.parametrize("page", ["new/", "coder/"])
def test_unstorable_recipe_input_is_a_400_with_the_form_error(browse, admin, tenant, case, page):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    data, field, message = UNSTORABLE_RECIPE_FORMS[case]
    response = browse(admin).post(f"/t/acme/-/recipes/{page}", {"name": "other", **data})
    assert response.status_code == 400
    errors = response.context["form"].errors[field]
    assert any(message in error for error in errors), errors
    assert list(Recipe.objects.values_list("name", "params")) == [("coder", {})]


def test_a_nul_in_the_reason_for_deleting_a_recipe_is_a_400(browse, admin, tenant):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    client = browse(admin)
    response = client.post("/t/acme/-/recipes/coder/delete/", {"reason": "a\x00b"})
    assert response.status_code == 400
    assert "Null characters are not allowed" in response.content.decode()
    assert Recipe.objects.filter(name="coder").exists()


# The recipe form: the same params and profiles as the JSON, one control each.


def _editor(**fields) -> dict:
    return {"editor": "form", "agent_document": "default", "context_enabled": "on", **fields}


def test_admin_creates_a_recipe_with_the_form(browse, admin, tenant):
    response = browse(admin).post(
        "/t/acme/-/recipes/new/",
        _editor(
            name="coder",
            agent_document="path",
            agent_document_path="notes/team.md",
            context_enabled="",
            context_budget_bytes="4096",
            **{
                "profile-0-name": "cli",
                "profile-0-client": "on",
                "profile-1-name": "ide",
                "profile-2-name": "",
                "reason": "a form",
            },
        ),
    )

    assert response.status_code == 302
    recipe = Recipe.objects.get(name="coder")
    assert recipe.params == {
        "agentDocument": "notes/team.md",
        "contextEnabled": False,
        "contextBudgetBytes": 4096,
    }
    assert recipe.profiles == {"cli": {"useClientAgentDoc": True}, "ide": {}}


def test_the_form_shows_the_stored_recipe_and_saving_it_unchanged_changes_nothing(
    browse, admin, tenant, project, vance, make_document
):
    make_document(vance, "notes/house.md", "# House\n")
    make_document(project, ".AGENTS/overview.md", "# Overview\n")
    recipe = policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"agentDocument": None},
        profiles={"cli": {"useClientAgentDoc": True}, "ide": {}},
        user=admin,
    )
    client = browse(admin)

    page = client.get("/t/acme/-/recipes/coder/").content.decode()
    assert re.search(r'value="none"[^>]*checked', page)
    assert 'value="cli"' in page and 'value="ide"' in page
    assert '<option value="notes/house.md">' in page  # the path picker
    assert ".AGENTS/overview.md</option>" not in page and 'value=".AGENTS/overview.md"' not in page
    assert 'name="params"' in page  # "Advanced": the JSON is still there

    response = client.post(
        "/t/acme/-/recipes/coder/",
        _editor(
            agent_document="none",
            **{"profile-0-name": "cli", "profile-0-client": "on", "profile-1-name": "ide"},
        ),
    )

    assert response.status_code == 302
    recipe.refresh_from_db()
    assert recipe.params == {"agentDocument": None}  # null stays null, not ""
    assert recipe.profiles == {"cli": {"useClientAgentDoc": True}, "ide": {}}


def test_profiles_are_added_switched_and_removed_with_the_form(browse, admin, tenant):
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"contextEnabled": True},
        profiles={"cli": {"useClientAgentDoc": True}, "old": {}},
        user=admin,
    )

    response = browse(admin).post(
        "/t/acme/-/recipes/coder/",
        _editor(
            **{
                "profile-0-name": "cli",
                "profile-1-name": "old",
                "profile-1-remove": "on",
                "profile-7-name": "batch",
                "profile-7-client": "on",
            }
        ),
    )

    assert response.status_code == 302
    recipe = Recipe.objects.get(name="coder")
    assert recipe.params == {"contextEnabled": True}
    assert recipe.profiles == {
        "cli": {"useClientAgentDoc": False},
        "batch": {"useClientAgentDoc": True},
    }


@pytest.mark.parametrize(
    "fields, control, message",
    [
        ({"agent_document": "path", "agent_document_path": ""}, "agent_document_path", "Name the"),
        (
            {"agent_document": "path", "agent_document_path": "../up.md"},
            "agent_document_path",
            "..",
        ),
        ({"context_budget_bytes": "lots"}, "context_budget_bytes", "whole number"),
        ({"context_budget_bytes": "99999999"}, "context_budget_bytes", "from 0 to"),
        ({"profile-0-name": "no spaces"}, "profiles", "profiles.no spaces"),
        ({"profile-0-name": "a", "profile-1-name": "a"}, "profiles", "named twice"),
        ({"agent_document": "sometimes"}, "agent_document", "Select a valid choice"),
    ],
)
def test_the_form_shows_each_refusal_beside_its_control_and_changes_nothing(
    browse, admin, tenant, fields, control, message
):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)

    response = browse(admin).post("/t/acme/-/recipes/coder/", _editor(**fields))

    assert response.status_code == 400
    errors = response.context["form"].errors[control]
    assert any(message in error for error in errors), errors
    assert list(Recipe.objects.values_list("params", "profiles")) == [({}, {})]


def test_readers_and_outsiders_cannot_use_the_recipe_form(browse, reader, outsider, admin, tenant):
    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    data = _editor(context_enabled="")

    assert browse(reader).post("/t/acme/-/recipes/coder/", data).status_code == 403
    assert browse(outsider).post("/t/acme/-/recipes/coder/", data).status_code == 404
    assert browse(outsider).get("/t/acme/-/recipes/coder/").status_code == 404
    assert Recipe.objects.get(name="coder").params == {}


def test_a_recipe_page_links_the_first_projects_previews_whatever_their_number(
    browse, reader, admin, tenant, project
):
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.web.views.policy import PREVIEW_LINKS

    policy_service.recipe_create(tenant=tenant, name="coder", params={}, profiles={}, user=admin)
    url = "/t/acme/-/recipes/coder/"
    page = browse(reader).get(url).content.decode()
    assert "/t/acme/web/memory-block/?recipe=coder" in page
    assert "?recipe=coder</code>" not in page  # no note while every project is linked
    for n in range(PREVIEW_LINKS + 5):
        tenant_service.project_create(tenant=tenant, slug=f"p{n:02}", name=f"P{n:02}", user=admin)
    page = browse(reader).get(url).content.decode()
    assert page.count("memory-block/?recipe=coder") == PREVIEW_LINKS
    assert f"The first {PREVIEW_LINKS} projects" in page
