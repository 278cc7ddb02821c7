"""The provider map API: members read, tenant admins write, outsiders see nothing."""

from __future__ import annotations

import pytest

from agentdocs.models import ProviderMapping

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/providers/"
NAME = "workstation/agent-baseline"


@pytest.fixture
def mapping(api, admin, project):
    response = api(admin).put(URL + NAME, {"project": "web", "path": "baseline.md"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_admin_maps_a_slashed_name_to_a_document_of_the_tenant(api, admin, mapping):
    assert mapping["name"] == NAME
    assert mapping["project"] == "web" and mapping["path"] == "baseline.md"
    assert api(admin).get(URL + NAME).json()["path"] == "baseline.md"


def test_remapping_returns_200_and_keeps_history(api, admin, mapping, vance):
    response = api(admin).put(
        URL + NAME, {"project": "_vance", "path": "agent.md", "reason": "moved"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["project"] == "_vance"
    stored = ProviderMapping.objects.get(name=NAME)
    history = list(
        stored.history.order_by("history_id").values_list("path", "history_change_reason")
    )
    assert history == [("baseline.md", ""), ("agent.md", "moved")]


def test_members_read_the_map_and_the_list(api, reader, mapping):
    assert api(reader).get(URL + NAME).status_code == 200
    listed = api(reader).get(URL).json()
    assert [m["name"] for m in listed["results"]] == [NAME]


@pytest.mark.parametrize("who", ["writer", "reader"])
def test_only_admins_write_the_map(api, request, who, mapping):
    user = request.getfixturevalue(who)
    put = api(user).put(URL + "skill/handoff", {"project": "web", "path": "h.md"}, format="json")
    assert put.status_code == 403
    assert put.json()["error"] == "forbidden"
    assert api(user).delete(URL + NAME).status_code == 403
    assert ProviderMapping.objects.filter(name=NAME).exists()
    assert not ProviderMapping.objects.filter(name="skill/handoff").exists()


def test_delete_removes_the_name(api, admin, mapping):
    assert api(admin).delete(URL + NAME).status_code == 204
    response = api(admin).get(URL + NAME)
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_outsiders_get_404_for_everything(api, outsider, other_tenant, mapping):
    client = api(outsider)
    assert client.get(URL).status_code == 404
    assert client.get(URL + NAME).status_code == 404
    assert (
        client.put(URL + NAME, {"project": "web", "path": "x.md"}, format="json").status_code == 404
    )
    assert client.delete(URL + NAME).status_code == 404
    assert ProviderMapping.objects.get(name=NAME).path == "baseline.md"


def test_a_project_of_another_tenant_cannot_be_mapped(api, admin, project, outsider):
    from agentdocs.services import tenancy as tenant_service

    globex = tenant_service.tenant_create(slug="globex", name="Globex", user=outsider)
    tenant_service.project_create(tenant=globex, slug="secret", name="S", user=outsider)
    response = api(admin).put(URL + "x/y", {"project": "secret", "path": "a.md"}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "project"


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("bad name", {"project": "web", "path": "a.md"}, "name"),
        ("a//b", {"project": "web", "path": "a.md"}, "name"),
        ("ok/name", {"project": "web", "path": "/abs.md"}, "path"),
        ("ok/name", {"project": "web"}, "path"),
        ("ok/name", {"project": 3, "path": "a.md"}, "project"),
        ("ok/name", {"project": "web", "path": "a.md", "extra": 1}, "extra"),
    ],
)
def test_bad_input_is_a_json_error_and_changes_nothing(api, admin, project, name, body, field):
    response = api(admin).put(URL + name, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not ProviderMapping.objects.exists()


def test_the_list_runs_constant_queries(api, admin, project, django_assert_max_num_queries):
    from agentdocs.services import providers

    for i in range(30):
        providers.provider_set(
            tenant=project.tenant,
            name=f"team/doc-{i}",
            project_slug="web",
            path=f"d{i}.md",
            user=admin,
        )
    client = api(admin)
    with django_assert_max_num_queries(4):
        assert len(client.get(URL).json()["results"]) == 30
