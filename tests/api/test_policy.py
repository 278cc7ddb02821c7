"""memory.* settings and recipes through the API: admins write, members read."""

from __future__ import annotations

import pytest

from agentdocs.models import Recipe, Setting

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
P = "/api/v1/tenants/acme/projects/web"


def test_tenant_setting_round_trip_with_history(api, tenant, admin, reader):
    put = api(admin).put(
        f"{T}/settings/memory.language",
        {"value": "en", "enforced": True, "reason": "house style"},
        format="json",
    )
    assert put.status_code == 201
    assert put.json()["enforced"] is True
    again = api(admin).put(f"{T}/settings/memory.language", {"value": "de"}, format="json")
    assert again.status_code == 200 and again.json()["enforced"] is False
    assert api(reader).get(f"{T}/settings/memory.language").json()["value"] == "de"
    assert [s["key"] for s in api(reader).get(f"{T}/settings/").json()["results"]] == [
        "memory.language"
    ]
    rows = Setting.history.order_by("history_id")
    assert [(r.value, r.change_type, r.history_user.username) for r in rows] == [
        ("en", "created", "alice"),
        ("de", "updated", "alice"),
    ]
    assert api(admin).delete(f"{T}/settings/memory.language").status_code == 204
    assert api(reader).get(f"{T}/settings/memory.language").status_code == 404
    assert Setting.history.latest("history_id").change_type == "deleted"


def test_project_settings_have_no_enforced_flag(api, project, admin):
    ok = api(admin).put(f"{P}/settings/memory.tone", {"value": "terse"}, format="json")
    assert ok.status_code == 201 and "enforced" not in ok.json()
    refused = api(admin).put(
        f"{P}/settings/memory.tone", {"value": "x", "enforced": True}, format="json"
    )
    assert refused.status_code == 400 and refused.json()["field"] == "enforced"
    # Project and tenant scopes are separate.
    assert api(admin).get(f"{T}/settings/memory.tone").status_code == 404


def test_a_project_setting_of_an_enforced_key_is_a_409_naming_the_key(api, project, admin):
    client = api(admin)
    assert (
        client.put(
            f"{T}/settings/memory.tone", {"value": "plain", "enforced": True}, format="json"
        ).status_code
        == 201
    )
    refused = client.put(f"{P}/settings/memory.tone", {"value": "loud"}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"] == "enforced" and refused.json()["field"] == "key"
    assert not Setting.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    ("key", "payload", "field"),
    [
        ("language", {"value": "en"}, "key"),
        ("memory.", {"value": "en"}, "key"),
        ("memory.x", {"value": 5}, "value"),
        ("memory.x", {"value": "two\nlines"}, "value"),
        ("memory.x", {}, "value"),
        ("memory.x", {"value": "en", "enforced": "yes"}, "enforced"),
        ("memory.x", {"value": "en", "colour": 1}, "colour"),
    ],
)
def test_bad_setting_input(api, tenant, admin, key, payload, field):
    response = api(admin).put(f"{T}/settings/{key}", payload, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not Setting.objects.exists()


def test_only_admins_write_settings_and_outsiders_see_nothing(
    api, project, writer, reader, outsider, other_tenant
):
    assert (
        api(writer).put(f"{T}/settings/memory.x", {"value": "1"}, format="json").status_code == 403
    )
    assert (
        api(reader).put(f"{P}/settings/memory.x", {"value": "1"}, format="json").status_code == 403
    )
    assert api(outsider).get(f"{T}/settings/").status_code == 404
    assert api(outsider).get(f"{P}/settings/").status_code == 404
    assert not Setting.objects.exists()


def test_recipe_keeps_the_difference_between_unset_empty_null_and_a_path(api, tenant, admin):
    for name, params in [
        ("unset", {}),
        ("empty", {"agentDocument": ""}),
        ("null", {"agentDocument": None}),
        ("path", {"agentDocument": "notes/team.md"}),
    ]:
        response = api(admin).post(
            f"{T}/recipes/", {"name": name, "params": params, "profiles": {}}, format="json"
        )
        assert response.status_code == 201, response.json()
    stored = {r.name: r.params for r in Recipe.objects.all()}
    assert stored == {
        "unset": {},
        "empty": {"agentDocument": ""},
        "null": {"agentDocument": None},
        "path": {"agentDocument": "notes/team.md"},
    }
    assert "agentDocument" not in stored["unset"]
    got = api(admin).get(f"{T}/recipes/null").json()
    assert got["params"] == {"agentDocument": None}


def test_recipe_update_and_delete_with_history(api, tenant, admin, reader):
    api(admin).post(f"{T}/recipes/", {"name": "coder", "params": {}}, format="json")
    updated = api(admin).put(
        f"{T}/recipes/coder",
        {"params": {"contextBudgetBytes": 4096}, "profiles": {"cli": {"useClientAgentDoc": True}}},
        format="json",
    )
    assert updated.status_code == 200
    assert api(reader).get(f"{T}/recipes/coder").json()["profiles"] == {
        "cli": {"useClientAgentDoc": True}
    }
    assert api(reader).put(f"{T}/recipes/coder", {"params": {}}, format="json").status_code == 403
    assert api(admin).delete(f"{T}/recipes/coder").status_code == 204
    assert api(reader).get(f"{T}/recipes/coder").status_code == 404
    assert [r.change_type for r in Recipe.history.order_by("history_id")] == [
        "created",
        "updated",
        "deleted",
    ]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "x", "params": []}, "params"),
        ({"name": "x", "params": {"agentDocument": "../up.md"}}, "params.agentDocument"),
        ({"name": "x", "params": {"agentDocument": 5}}, "params.agentDocument"),
        ({"name": "x", "params": {"agentDocumnet": "a.md"}}, "params.agentDocumnet"),
        ({"name": "x", "params": {"contextBudgetBytes": -1}}, "params.contextBudgetBytes"),
        ({"name": "x", "params": {"contextBudgetBytes": "1k"}}, "params.contextBudgetBytes"),
        ({"name": "x", "params": {"contextEnabled": "no"}}, "params.contextEnabled"),
        ({"name": "x", "profiles": []}, "profiles"),
        (
            {"name": "x", "profiles": {"cli": {"useClientAgentDoc": "yes"}}},
            "profiles.cli.useClientAgentDoc",
        ),
        ({"name": "x", "profiles": {"cli": {"other": True}}}, "profiles.cli.other"),
        ({"name": "x", "profiles": {"cli": True}}, "profiles.cli"),
        ({"name": "bad name"}, "name"),
        ({"params": {}}, "name"),
    ],
)
def test_invalid_recipes_are_refused_naming_the_field(api, tenant, admin, payload, field):
    response = api(admin).post(f"{T}/recipes/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not Recipe.objects.exists()


def test_recipes_are_tenant_scoped(api, tenant, admin, outsider, other_tenant):
    api(admin).post(f"{T}/recipes/", {"name": "coder"}, format="json")
    assert api(outsider).get(f"{T}/recipes/").status_code == 404
    assert api(outsider).get(f"{T}/recipes/coder").status_code == 404
    assert api(outsider).get("/api/v1/tenants/globex/recipes/coder").status_code == 404
    assert api(admin).post(f"{T}/recipes/", {"name": "coder"}, format="json").status_code == 409
