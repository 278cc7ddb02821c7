"""The Django admin writes only through the services: versions, history, refusals."""

from __future__ import annotations

import pytest
from django.contrib import admin as django_admin
from django.contrib.auth import get_user_model
from django.urls import reverse
from simple_history.admin import SimpleHistoryAdmin

from agentdocs.models import ChangeType, Document, Membership, Project, Recipe, Role, Setting
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import skills as skill_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser(username="root", password="root-password")


@pytest.fixture
def admin_client(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def agent_md(project, make_document, writer) -> Document:
    return make_document(project, "agent.md", "# Rules\n- one\n", user=writer, reason="first")


def change_url(obj) -> str:
    return reverse(f"admin:agentdocs_{obj._meta.model_name}_change", args=[obj.pk])


def test_saving_a_document_in_the_admin_writes_a_version_with_user_and_reason(
    admin_client, superuser, agent_md
):
    response = admin_client.post(
        change_url(agent_md),
        {"body": "# Rules\r\n- one\r\n- two\r\n", "reason": "Add rule two", "base_version": 1},
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    agent_md.refresh_from_db()
    assert agent_md.version == 2
    assert agent_md.body == "# Rules\n- one\n- two\n"  # the browser's CRLF became LF
    assert agent_md.updated_by == superuser
    latest = agent_md.history.order_by("-history_id").first()
    assert latest.history_user == superuser
    assert latest.history_change_reason == "Add rule two"
    assert latest.change_type == ChangeType.WRITTEN
    assert agent_md.history.count() == 2


def test_saving_an_unchanged_document_creates_no_version(admin_client, agent_md):
    response = admin_client.post(
        change_url(agent_md), {"body": agent_md.body, "reason": "", "base_version": 1}
    )

    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.version == 1
    assert agent_md.history.count() == 1


def test_adding_a_document_in_the_admin_goes_through_the_service(admin_client, superuser, project):
    response = admin_client.post(
        reverse("admin:agentdocs_document_add"),
        {"project": project.pk, "path": "notes/team.md", "body": "# Team\n", "reason": "Start"},
    )

    assert response.status_code == 302
    document = Document.objects.get(project=project, path="notes/team.md")
    assert (document.version, document.updated_by) == (1, superuser)
    assert document.sha256 and document.size == len(b"# Team\n")
    record = document.history.get()
    assert (record.history_change_reason, record.change_type) == ("Start", ChangeType.CREATED)


def test_secret_like_content_is_refused_with_a_form_error(admin_client, agent_md):
    body = "# Rules\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n"
    response = admin_client.post(
        change_url(agent_md), {"body": body, "reason": "oops", "base_version": 1}
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "Line 2" in errors["body"][0] and "private key" in errors["body"][0]
    agent_md.refresh_from_db()
    assert agent_md.version == 1 and agent_md.history.count() == 1


def test_a_bad_path_is_refused_with_a_form_error(admin_client, project):
    response = admin_client.post(
        reverse("admin:agentdocs_document_add"),
        {"project": project.pk, "path": "../etc/passwd", "body": "x", "reason": ""},
    )

    assert response.status_code == 200
    assert "path" in response.context["adminform"].form.errors
    assert not Document.objects.exists()


def test_a_stale_admin_form_is_refused_and_nothing_is_written(admin_client, agent_md, writer):
    document_service.document_write(
        document=agent_md, body="# Rules\n- newer\n", base_version=1, user=writer, reason="race"
    )

    response = admin_client.post(
        change_url(agent_md), {"body": "# Mine\n", "reason": "late", "base_version": 1}
    )

    assert response.status_code == 200
    assert "now at version 2" in str(response.context["adminform"].form.non_field_errors())
    agent_md.refresh_from_db()
    assert agent_md.version == 2 and agent_md.body == "# Rules\n- newer\n"


def test_deleting_in_the_admin_is_a_service_delete_that_keeps_history(
    admin_client, superuser, agent_md
):
    url = reverse("admin:agentdocs_document_delete", args=[agent_md.pk])

    response = admin_client.post(url, {"post": "yes"})

    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.is_deleted and agent_md.version == 2
    latest = agent_md.history.order_by("-history_id").first()
    assert latest.change_type == ChangeType.DELETED and latest.history_user == superuser


def test_the_bulk_delete_action_is_not_offered(admin_client, agent_md):
    response = admin_client.get(reverse("admin:agentdocs_document_changelist"))

    assert response.status_code == 200
    actions = [name for name, _ in response.context["action_form"].fields["action"].choices]
    assert "delete_selected" not in actions


def test_history_page_lists_versions_with_reasons(admin_client, agent_md, writer):
    document_service.document_write(
        document=agent_md, body="# Rules\n- two\n", base_version=1, user=writer, reason="Second"
    )

    response = admin_client.get(reverse("admin:agentdocs_document_history", args=[agent_md.pk]))

    assert response.status_code == 200
    assert b"Second" in response.content and b"first" in response.content


def test_reverting_from_the_history_page_is_a_new_version(admin_client, agent_md, writer):
    document_service.document_write(
        document=agent_md, body="# Rules\n- two\n", base_version=1, user=writer, reason="Second"
    )
    first = agent_md.history.get(version=1)
    url = reverse("admin:agentdocs_document_simple_history", args=[agent_md.pk, first.history_id])

    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, {"body": first.body, "reason": "Back to one"})

    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert (agent_md.version, agent_md.body) == (3, "# Rules\n- one\n")
    latest = agent_md.history.order_by("-history_id").first()
    assert latest.change_type == ChangeType.REVERTED
    assert latest.history_change_reason == "Back to one"


def test_adding_a_tenant_in_the_admin_creates_its_reserved_project(admin_client, superuser):
    response = admin_client.post(
        reverse("admin:agentdocs_tenant_add"), {"slug": "initech", "name": "Initech"}
    )

    assert response.status_code == 302
    assert Project.objects.filter(tenant__slug="initech", slug="_vance").exists()


def test_the_last_admin_cannot_be_demoted_in_the_admin(admin_client, tenant, admin):
    membership = Membership.objects.get(tenant=tenant, user=admin)

    response = admin_client.post(
        change_url(membership), {"role": Role.READER, "reason": "demote"}, follow=True
    )

    assert b"last admin" in response.content
    membership.refresh_from_db()
    assert membership.role == Role.ADMIN


def test_settings_are_written_through_the_policy_service(admin_client, superuser, tenant):
    add = reverse("admin:agentdocs_setting_add")

    response = admin_client.post(
        add,
        {
            "tenant": tenant.pk,
            "key": "memory.tone",
            "value": "plain",
            "enforced": "on",
            "reason": "House style",
        },
    )

    assert response.status_code == 302
    setting = Setting.objects.get(tenant=tenant, key="memory.tone")
    assert setting.enforced and setting.updated_by == superuser
    assert setting.history.get().history_change_reason == "House style"

    response = admin_client.post(add, {"tenant": tenant.pk, "key": "tone", "value": "x"})

    assert response.status_code == 200
    assert "key" in response.context["adminform"].form.errors


def test_recipes_are_validated_and_stored_as_given(admin_client, tenant):
    add = reverse("admin:agentdocs_recipe_add")

    response = admin_client.post(
        add,
        {
            "tenant": tenant.pk,
            "name": "summarizer",
            "params": '{"agentDocument": ""}',
            "profiles": "{}",
            "reason": "No agent document for summaries",
        },
    )

    assert response.status_code == 302
    assert Recipe.objects.get(tenant=tenant, name="summarizer").params == {"agentDocument": ""}

    response = admin_client.post(
        add,
        {"tenant": tenant.pk, "name": "coder", "params": '{"agentDocumnet": ""}', "profiles": "{}"},
    )

    assert response.status_code == 200
    assert "params" in response.context["adminform"].form.errors
    assert not Recipe.objects.filter(name="coder").exists()


def test_binding_records_the_provider_map_invitations_and_tokens_are_view_only(admin_client):
    for model in ("bindingrecord", "providermapping", "invitation", "apitoken"):
        assert admin_client.get(reverse(f"admin:agentdocs_{model}_changelist")).status_code == 200
        assert admin_client.get(reverse(f"admin:agentdocs_{model}_add")).status_code == 403


# History URLs that name nothing ---------------------------------------------------------


def _history_admins() -> list:
    return sorted(
        (
            model_admin
            for model_admin in django_admin.site._registry.values()
            if isinstance(model_admin, SimpleHistoryAdmin)
        ),
        key=lambda model_admin: model_admin.model._meta.model_name,
    )


def test_every_history_admin_is_covered_below():
    names = {model_admin.model._meta.model_name for model_admin in _history_admins()}
    assert names == {
        "apitoken",
        "document",
        "invitation",
        "membership",
        "project",
        "providermapping",
        "recipe",
        "setting",
        "skill",
        "tenant",
    }


@pytest.fixture
def one_of_each(project, agent_md, admin):
    policy_service.setting_set(
        tenant=project.tenant, project=None, key="memory.language", value="en", user=admin
    )
    policy_service.recipe_create(
        tenant=project.tenant, name="cli", params={}, profiles={}, user=admin
    )
    provider_service.provider_set(
        tenant=project.tenant, name="baseline", project_slug="web", path="agent.md", user=admin
    )
    tenant_service.invitation_create(
        tenant=project.tenant, role="reader", invited_by=admin, username="someone"
    )
    token_service.token_create(user=admin, name="admin token", scopes=["read"])
    skill_service.skill_create(
        project=project,
        name="handoff",
        files={"SKILL.md": "---\nname: handoff\ndescription: Hand over.\n---\n"},
        user=admin,
    )


@pytest.mark.parametrize(
    "model_admin", _history_admins(), ids=lambda model_admin: model_admin.model._meta.model_name
)
def test_a_history_url_that_names_nothing_is_a_404(admin_client, one_of_each, model_admin):
    model = model_admin.model
    obj = model.objects.order_by("pk").first()
    other = model.history.exclude(**{model._meta.pk.attname: obj.pk}).first()
    base = f"/admin/agentdocs/{model._meta.model_name}/"
    real = base + f"{obj.pk}/history/"
    assert admin_client.get(real).status_code == 200
    version = obj.history.order_by("history_id").first().history_id
    assert admin_client.get(real + f"{version}/").status_code == 200
    urls = [
        base + "abc/history/",
        base + "99999999999999999999999/history/",
        base + "-1/history/",
        base + f"{obj.pk}/change/history/",
        base + "abc/history/1/",
        base + "99999999999999999999999/history/1/",
        real + "abc/",
        real + "99999999999999999999999/",
        real + "0/",
    ]
    if other is not None:  # a version of another row is no version of this one
        urls.append(real + f"{other.history_id}/")
    admin_client.raise_request_exception = False
    for url in urls:
        assert admin_client.get(url).status_code == 404, url
    if model is Document:  # its POST is a revert
        for url in (real + "abc/", base + "abc/history/1/"):
            assert admin_client.post(url, {"reason": "r"}).status_code == 404, url


def test_the_token_admin_never_shows_a_key_or_its_hash(admin_client, admin):
    new = token_service.token_create(user=admin, name="ci", scopes=["read"])
    pages = [
        admin_client.get(reverse("admin:agentdocs_apitoken_changelist")),
        admin_client.get(reverse("admin:agentdocs_apitoken_change", args=[new.token.pk])),
    ]
    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        assert new.token.prefix in html
        assert new.key not in html and new.token.key_hash not in html
