"""Binding record pages: bind from the browser, the list, a record with its outdated
status, reconstruction and comparison; outsiders get 404."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import BindingRecord
from agentdocs.selectors import documents as document_selectors
from agentdocs.services import documents as svc
from agentdocs.services import providers as provider_service

pytestmark = pytest.mark.django_db

MANIFEST = {
    "context": [{"name": "workstation/agent-baseline", "standing": "rule"}],
    "local": ["AGENTS.md", "docs/missing.md"],
    "exceptions": [
        {"target": "workstation/agent-baseline#deploy", "effect": "narrow", "reason": "No deploys"},
        {"target": "workstation/agent-baseline#tone", "effect": "replace", "reason": "Ours"},
    ],
}


@pytest.fixture
def bound_project(project, vance, admin, writer, make_document):
    baseline = make_document(vance, "baseline.md", "# Baseline\n<script>x()</script>\n")
    agents = make_document(project, "AGENTS.md", "# Agents\nRun the tests.\n", user=writer)
    make_document(project, "context.json", json.dumps(MANIFEST), user=writer)
    provider_service.provider_set(
        tenant=project.tenant,
        name="workstation/agent-baseline",
        project_slug="_vance",
        path="baseline.md",
        user=admin,
    )
    return {"baseline": baseline, "agents": agents}


def bind(client, process: str = "run-1", **extra):
    return client.post(
        "/t/acme/web/bindings/",
        {"process": process, "with_memory_block": "on", "recipe": "", **extra},
    )


def test_bind_from_the_browser_and_read_the_record(browse, writer, bound_project):
    client = browse(writer)
    response = bind(client)
    record = BindingRecord.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/t/acme/web/bindings/{record.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert "2 problems" in page  # the missing local document and the refused replace on a rule
    assert "missing_local_document" in page and "refused_exception" in page
    assert "narrowed" in page and "refused" in page
    assert 'href="/t/acme/_vance/doc/baseline.md?version=1"' in page
    assert "badge-current" in page and "all sources current" not in page
    assert 'badge-missing">missing' in page  # docs/missing.md, unresolved when bound
    assert "1 still missing" in page
    assert record.memory_block_sha256 in page
    listing = client.get("/t/acme/web/bindings/").content.decode()
    assert "run-1" in listing and f"#{record.pk}" in listing


def test_without_a_manifest_the_error_is_shown_beside_the_form(browse, writer, project):
    response = bind(browse(writer))
    assert response.status_code == 400
    assert "no context.json document" in response.content.decode()
    assert not BindingRecord.objects.exists()


def test_an_unknown_recipe_is_refused_beside_the_form_with_its_own_status(
    browse, writer, bound_project
):
    response = bind(browse(writer), recipe="nope")
    assert response.status_code == 404  # NotFound, as the API answers (was 400 here)
    assert "No recipe &#x27;nope&#x27; in this tenant." in response.content.decode()
    assert not BindingRecord.objects.exists()


def test_an_edit_makes_the_record_outdated_and_reconstruction_restores_the_bound_text(
    browse, writer, admin, bound_project
):
    client = browse(writer)
    bind(client)
    record = BindingRecord.objects.get()
    svc.document_write(
        document=bound_project["agents"], body="# Agents\nChanged.\n", base_version=1, user=writer
    )
    page = client.get(f"/t/acme/web/bindings/{record.pk}/").content.decode()
    assert "1 outdated" in page and "Changed from version 1 to 2." in page
    rebuilt = client.get(f"/t/acme/web/bindings/{record.pk}/reconstruct/").content.decode()
    assert "Run the tests." in rebuilt and "Changed." not in rebuilt
    assert "&lt;script&gt;x()&lt;/script&gt;" in rebuilt  # restored text is shown, escaped
    assert "verified" in rebuilt and "not restored" in rebuilt  # the missing document says so
    assert "byte-identical" in rebuilt


def test_compare_two_records(browse, writer, project, make_document, bound_project):
    client = browse(writer)
    bind(client, "run-1")
    svc.document_write(
        document=bound_project["agents"], body="# Agents\nNew.\n", base_version=1, user=writer
    )
    make_document(project, "agent.md", "# Now the block has agent notes\n")
    bind(client, "run-2")
    first, second = BindingRecord.objects.order_by("pk")
    page = client.get(f"/t/acme/web/bindings/compare/?a={first.pk}&b={second.pk}").content.decode()
    assert "AGENTS.md" in page and "changed" in page
    assert "Different text" in page


def test_list_filters_by_process_and_problems(browse, writer, bound_project):
    client = browse(writer)
    bind(client, "run-a")
    bind(client, "run-b")
    page = client.get("/t/acme/web/bindings/?process=run-a").content.decode()
    assert "run-a" in page and "run-b" not in page.split("Records, newest first")[1]
    none = client.get("/t/acme/web/bindings/?problems=without").content.decode()
    assert "No binding records match" in none


def test_outsiders_get_404_on_binding_pages(browse, writer, outsider, other_tenant, bound_project):
    bind(browse(writer))
    record = BindingRecord.objects.get()
    client = browse(outsider)
    for url in [
        "/t/acme/web/bindings/",
        f"/t/acme/web/bindings/{record.pk}/",
        f"/t/acme/web/bindings/{record.pk}/reconstruct/",
        f"/t/acme/web/bindings/compare/?a={record.pk}&b={record.pk}",
    ]:
        assert client.get(url).status_code == 404, url
    assert bind(client, "forged").status_code == 404
    assert BindingRecord.objects.count() == 1


def test_a_record_of_another_project_is_404(browse, admin, writer, tenant, bound_project):
    from agentdocs.services import tenancy as tenant_service

    tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    bind(browse(writer))
    record = BindingRecord.objects.get()
    assert browse(writer).get(f"/t/acme/api/bindings/{record.pk}/").status_code == 404


@pytest.mark.parametrize("records", [1, 12])
def test_binding_pages_run_constant_queries(
    browse, writer, bound_project, django_assert_max_num_queries, records
):
    client = browse(writer)
    for n in range(records):
        bind(client, f"run-{n}")
    record = BindingRecord.objects.order_by("pk").first()
    with django_assert_max_num_queries(5):
        client.get("/t/acme/web/bindings/")
    with django_assert_max_num_queries(6):
        client.get(f"/t/acme/web/bindings/{record.pk}/")


def test_a_record_whose_sources_all_resolve_says_all_sources_current(
    browse, writer, project, bound_project
):
    context = document_selectors.document_get(project=project, path="context.json")
    manifest = {**MANIFEST, "local": ["AGENTS.md"]}
    svc.document_write(document=context, body=json.dumps(manifest), base_version=1, user=writer)
    client = browse(writer)
    bind(client)
    record = BindingRecord.objects.get()
    page = client.get(f"/t/acme/web/bindings/{record.pk}/").content.decode()
    assert "all sources current" in page and "still missing" not in page


def test_a_bind_over_the_size_cap_is_refused_on_the_page_with_413(
    browse, writer, bound_project, settings
):
    # The record is about 3 KB, 1.7 KB of it without the Memory Block.
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 2500
    response = bind(browse(writer))
    assert response.status_code == 413
    page = response.content.decode()
    assert "AGENTDOCS_BINDING_MAX_RECORD_BYTES" in page and "Nothing was stored" in page
    assert "its Memory Block takes" in page
    assert not BindingRecord.objects.exists()
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 3500
    assert bind(browse(writer)).status_code == 302
    assert BindingRecord.objects.count() == 1


def test_outsiders_get_404_on_the_bind_form_whatever_the_cap(
    browse, outsider, other_tenant, bound_project, settings
):
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 10
    assert bind(browse(outsider)).status_code == 404
    assert not BindingRecord.objects.exists()


def test_compare_says_unchanged_for_a_new_version_with_the_same_text(browse, writer, bound_project):
    client = browse(writer)
    bind(client, "run-1")
    agents = bound_project["agents"]
    agents = svc.document_write(
        document=agents, body="# Other\n", base_version=1, user=writer
    ).document
    svc.document_revert(document=agents, version=1, user=writer)  # v3: v1's text again
    bind(client, "run-2")
    first, second = BindingRecord.objects.order_by("pk")

    page = client.get(f"/t/acme/web/bindings/compare/?a={first.pk}&b={second.pk}").content.decode()

    row = page[page.index("AGENTS.md") : page.index("</tr>", page.index("AGENTS.md"))]
    assert ">unchanged</span>" in row and "same text, new version" in row
    assert ">changed<" not in row
    assert "v1" in row and "v3" in row
