"""Round trips: importing what agentdocs exported changes nothing, and an edit of an
exported file goes back to the document it came from as a change request
(`agentdocs.services.import_round_trip`), through `POST .../import/` and `.../propose/`."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import ChangeRequest, Document
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from tests.services.test_documents_secret_acknowledgement import TEST_TOKEN

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
NOTES = "# Web rules\n\n- Use tabs.\n- Keep commits small.\n"
API_DOC = (
    "---\ndescription: API views\nglobs: ['src/api/**']\n---\n\nThin views.\nOne per operation.\n"
)
STYLE_DOC = "Short names.\nNo abbreviations.\n"


@pytest.fixture
def sources(project, make_document, tenant, admin):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin
    )
    return {
        "agent": make_document(project, "agent.md", NOTES),
        "api": make_document(project, ".AGENTS/api.md", API_DOC),
        "style": make_document(project, ".AGENTS/style.md", STYLE_DOC),
    }


def exported(client, format: str = "all") -> dict[str, str]:
    response = client.get(f"{BASE}/export/", {"format": format})
    assert response.status_code == 200, response.json()
    return {entry["path"]: entry["content"] for entry in response.json()["files"]}


def post(client, files: dict[str, str], *, endpoint: str = "import", dry_run: bool = False):
    body = {"files": [{"path": p, "content": c} for p, c in files.items()], "dry_run": dry_run}
    return client.post(f"{BASE}/{endpoint}/", body, format="json")


def plan_of(response) -> list[dict]:
    assert response.status_code == 200, response.json()
    return response.json()["plan"]


def bodies(project) -> dict[str, tuple[int, str]]:
    return {d.path: (d.version, d.body) for d in Document.objects.filter(project=project)}


@pytest.mark.parametrize("format", ["all", "agents-md", "claude-md", "cursor", "copilot"])
def test_importing_an_unchanged_sync_is_all_unchanged_and_writes_nothing(
    api, writer, project, sources, format
):
    client = api(writer)
    files = exported(client, format)
    before = bodies(project)

    plan = plan_of(post(client, files))

    assert plan and all(entry["action"] == "unchanged" for entry in plan), plan
    assert {entry["source"] for entry in plan} == set(files)
    assert bodies(project) == before
    assert not ChangeRequest.objects.exists()


def test_an_edit_of_the_notes_section_of_claude_md_is_one_change_request_on_agent_md(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "all")
    files["CLAUDE.md"] = files["CLAUDE.md"].replace(
        "- Keep commits small.", "- Keep commits small.\n- Never force-push."
    )
    before = bodies(project)

    plan = plan_of(post(client, files))

    proposed = [entry for entry in plan if entry["action"] == "propose"]
    assert [(e["source"], e["target"]) for e in proposed] == [("CLAUDE.md", "agent.md")]
    assert all(e["action"] == "unchanged" for e in plan if e not in proposed), plan
    [change] = ChangeRequest.objects.all()
    assert (change.path, change.base_version, change.proposer) == ("agent.md", 1, writer)
    assert change.body == NOTES.replace(
        "- Keep commits small.\n", "- Keep commits small.\n- Never force-push.\n"
    )
    assert change.reason == "edited in CLAUDE.md (agentdocs round trip)"
    assert proposed[0]["change_request"] == change.pk
    assert proposed[0]["change_request_url"].endswith(f"/changes/{change.pk}/")
    # No document was written: not agent.md, and nothing with the export's sections.
    assert bodies(project) == before


def test_an_edit_of_one_context_section_is_a_change_request_on_that_document(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "agents-md")
    # .AGENTS/api.md is scoped to src/api/: Codex reads it as src/api/AGENTS.md.
    nested = files["src/api/AGENTS.md"]
    files["src/api/AGENTS.md"] = nested.replace("Thin views.", "Thin views, no logic.")

    plan = plan_of(post(client, files))

    assert [(e["source"], e["target"], e["action"]) for e in plan] == [
        ("AGENTS.md", None, "unchanged"),  # the Policy section
        ("AGENTS.md", "agent.md", "unchanged"),
        ("AGENTS.md", ".AGENTS/style.md", "unchanged"),
        ("src/api/AGENTS.md", ".AGENTS/api.md", "propose"),
    ]
    [change] = ChangeRequest.objects.all()
    # The frontmatter (scope) the section shows as its heading and description stays.
    assert change.path == ".AGENTS/api.md"
    assert change.body == API_DOC.replace("Thin views.", "Thin views, no logic.")


def test_an_edit_of_a_cursor_rule_goes_to_its_one_source(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "cursor")
    files[".cursor/rules/style.mdc"] = files[".cursor/rules/style.mdc"].replace(
        "No abbreviations.", "No abbreviations, ever."
    )
    plan = plan_of(post(client, files, endpoint="propose"))
    assert [e["target"] for e in plan if e["action"] == "propose"] == [".AGENTS/style.md"]
    assert ChangeRequest.objects.get().body == "Short names.\nNo abbreviations, ever.\n"


def test_the_same_edit_in_several_files_is_one_change_request(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "all")
    for path in ("AGENTS.md", "CLAUDE.md", "GEMINI.md"):
        files[path] = files[path].replace("- Use tabs.", "- Use tabs, width 4.")

    plan = plan_of(post(client, files))

    proposed = [e for e in plan if e["action"] == "propose"]
    assert len(proposed) == 3 and len({e["change_request"] for e in proposed}) == 1
    assert "the same edit as AGENTS.md" in proposed[1]["detail"]
    assert ChangeRequest.objects.count() == 1


def test_proposing_again_opens_no_second_change_request(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "claude-md")
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use spaces.")
    first = plan_of(post(client, files, endpoint="propose"))
    again = plan_of(post(client, files, endpoint="propose"))
    [change] = ChangeRequest.objects.all()
    [proposed] = [e for e in again if e["action"] == "propose"]
    assert proposed["change_request"] == change.pk
    assert f"already proposed as change #{change.pk}" in proposed["detail"]
    assert [e["change_request"] for e in first if e["action"] == "propose"] == [change.pk]


def test_when_the_server_moved_on_the_edit_is_merged_onto_the_current_version(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "claude-md")
    document_service.document_write(
        document=sources["agent"],
        body=NOTES + "- Review your own diff.\n",
        base_version=1,
        user=writer,
    )
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use tabs, width 4.")

    plan = plan_of(post(client, files))

    [proposed] = [e for e in plan if e["action"] == "propose"]
    assert "merged onto v2 (saved since v1)" in proposed["detail"]
    change = ChangeRequest.objects.get()
    assert change.base_version == 2
    assert change.body == (
        "# Web rules\n\n- Use tabs, width 4.\n- Keep commits small.\n- Review your own diff.\n"
    )


def test_a_conflict_with_the_current_version_is_proposed_on_the_named_version_and_said(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "claude-md")
    document_service.document_write(
        document=sources["agent"],
        body=NOTES.replace("- Use tabs.", "- Use spaces."),
        base_version=1,
        user=writer,
    )
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use tabs, width 4.")

    plan = plan_of(post(client, files))

    [proposed] = [e for e in plan if e["action"] == "propose"]
    assert "conflicts with v2 (saved since) in 1 place(s)" in proposed["detail"]
    change = ChangeRequest.objects.get()
    assert change.base_version == 1 and "- Use tabs, width 4." in change.body


def test_an_edit_of_the_policy_section_is_not_proposed_and_the_plan_says_why(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "agents-md")
    files["AGENTS.md"] = files["AGENTS.md"].replace("terse", "chatty")
    plan = plan_of(post(client, files))
    assert plan[0]["target"] is None and plan[0]["action"] == "skipped"
    assert "Policy section" in plan[0]["detail"] and "memory.* settings" in plan[0]["detail"]
    assert not ChangeRequest.objects.exists()


def test_text_outside_the_sections_and_a_removed_section_are_reported_not_lost(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "agents-md")
    text = files["AGENTS.md"]
    start = text.index("### .AGENTS/style.md")
    files["AGENTS.md"] = text.replace(
        "\n\n## Policy", "\n\nRead me first.\n\n## Policy", 1
    ).replace(text[start:], "")
    plan = plan_of(post(client, files))
    skipped = [(e["target"], e["detail"]) for e in plan if e["action"] == "skipped"]
    assert skipped[0][0] is None and "text outside every section" in skipped[0][1]
    assert skipped[1][0] == ".AGENTS/style.md" and "was removed here" in skipped[1][1]
    assert not ChangeRequest.objects.exists()


def test_a_neutralized_line_comes_back_as_the_document_has_it(api, writer, project, make_document):
    body = "# Notes\n\n## Agent Notes (quoted)\n\n- First rule.\n"
    make_document(project, "agent.md", body)
    client = api(writer)
    files = exported(client, "agents-md")
    assert "\\## Agent Notes (quoted)" in files["AGENTS.md"]
    files["AGENTS.md"] = files["AGENTS.md"].replace("- First rule.", "- First rule, amended.")
    plan_of(post(client, files))
    assert ChangeRequest.objects.get().body == body.replace("First rule.", "First rule, amended.")


def test_notes_from_vance_go_to_vances_agent_md(api, writer, project, vance, make_document):
    make_document(vance, "agent.md", "# Tenant rules\n\n- Be kind.\n")
    client = api(writer)
    files = exported(client, "agents-md")
    files["AGENTS.md"] = files["AGENTS.md"].replace("- Be kind.", "- Be kind to reviewers.")
    plan = plan_of(post(client, files, endpoint="propose"))
    [proposed] = [e for e in plan if e["action"] == "propose"]
    assert "in _vance" in proposed["detail"]
    change = ChangeRequest.objects.get()
    assert change.project == vance and change.body == "# Tenant rules\n\n- Be kind to reviewers.\n"


def test_a_dry_run_proposes_nothing(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "claude-md")
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use spaces.")
    response = post(client, files, dry_run=True)
    [proposed] = [e for e in plan_of(response) if e["action"] == "propose"]
    assert proposed["change_request"] is None and response.json()["applied"] is False
    assert not ChangeRequest.objects.exists()


def test_a_secret_in_an_edit_is_refused_naming_the_file_and_nothing_is_proposed(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "all")
    files["GEMINI.md"] = files["GEMINI.md"].replace("- Use tabs.", f"- Token {TEST_TOKEN}")
    response = post(client, files)
    assert response.status_code == 422, response.json()
    body = response.json()
    field = f"files.{list(files).index('GEMINI.md')}.content"
    assert body["error"] == "secret_detected" and body["field"] == field
    assert "GEMINI.md" in body["detail"]
    assert not ChangeRequest.objects.exists()


def test_a_file_agentdocs_did_not_generate_imports_as_before_and_propose_skips_it(
    api, writer, project, sources
):
    client = api(writer)
    mine = {"AGENTS.md": "# Mine\n"}
    [skipped] = plan_of(post(client, mine, endpoint="propose"))
    assert skipped["action"] == "skipped" and "not generated by agentdocs" in skipped["detail"]
    assert Document.objects.get(project=project, path="agent.md").body == NOTES
    [imported] = plan_of(post(client, mine))
    assert (imported["action"], imported["target"]) == ("update", "agent.md")


def test_a_file_generated_for_another_project_is_skipped(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "agents-md")
    files["AGENTS.md"] = files["AGENTS.md"].replace("project: web;", "project: other;", 1)
    [entry] = [e for e in plan_of(post(client, files)) if e["source"] == "AGENTS.md"]
    assert entry["action"] == "skipped" and "acme/other" in entry["detail"]


def test_a_reader_may_propose_and_an_outsider_gets_404(
    api, reader, outsider, other_tenant, project, sources
):
    files = exported(api(reader), "claude-md")
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use spaces.")
    refused = post(api(outsider), files, endpoint="propose")
    assert refused.status_code == 404 and refused.json()["error"] == "not_found"
    assert not ChangeRequest.objects.exists()
    assert post(api(reader), files, endpoint="import").status_code == 403
    plan = plan_of(post(api(reader), files, endpoint="propose"))
    assert [e["action"] for e in plan].count("propose") == 1
    assert ChangeRequest.objects.get().proposer == reader


def test_bad_input_to_propose_names_the_field(api, writer, project, sources):
    response = api(writer).post(f"{BASE}/propose/", {"files": []}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "files"


def test_the_queries_do_not_grow_with_the_files_and_documents(
    api, writer, project, sources, make_document
):
    client = api(writer)

    def count() -> int:
        files = exported(client, "all")
        with CaptureQueriesContext(connection) as queries:
            plan_of(post(client, files, dry_run=True))
        return len(queries)

    few = count()
    for n in range(6):
        make_document(project, f".AGENTS/more{n}.md", f"More {n}.\n")
    assert count() == few


def test_an_edit_of_a_rule_files_frontmatter_is_said_not_proposed(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "cursor")
    files[".cursor/rules/api.mdc"] = files[".cursor/rules/api.mdc"].replace(
        "src/api/**", "src/**", 1
    )
    [entry] = [e for e in plan_of(post(client, files)) if e["source"] == ".cursor/rules/api.mdc"]
    assert entry["action"] == "unchanged"
    assert "its frontmatter differs from what agentdocs exports now" in entry["detail"]
    assert not ChangeRequest.objects.exists()


def test_the_exported_cursor_rule_is_taken_back_section_by_section(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "cursor")
    main = ".cursor/rules/agentdocs.mdc"
    files[main] = files[main].replace("- Use tabs.", "- Use spaces.")
    plan = [e for e in plan_of(post(client, files)) if e["source"] == main]
    assert [(e["target"], e["action"]) for e in plan] == [
        (None, "unchanged"),
        ("agent.md", "propose"),
    ]
    assert ChangeRequest.objects.get().path == "agent.md"
    assert not Document.objects.filter(project=project, path=".AGENTS/agentdocs.md").exists()


def test_an_edit_of_a_context_sections_description_is_said_and_its_text_proposed(
    api, writer, project, sources
):
    client = api(writer)
    files = exported(client, "agents-md")
    files["src/api/AGENTS.md"] = (
        files["src/api/AGENTS.md"]
        .replace("API views\n", "API views and serializers\n")
        .replace("One per operation.", "One per operation, always.")
    )
    [entry] = [e for e in plan_of(post(client, files)) if e["target"] == ".AGENTS/api.md"]
    assert entry["action"] == "propose"
    assert "its description is the document's frontmatter `description`" in entry["detail"]
    assert ChangeRequest.objects.get().body == API_DOC.replace(
        "One per operation.", "One per operation, always."
    )


def test_a_version_the_document_never_had_is_skipped(api, writer, project, sources):
    client = api(writer)
    files = exported(client, "claude-md")
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("web/agent.md@v1", "web/agent.md@v9", 1)
    files["CLAUDE.md"] = files["CLAUDE.md"].replace("- Use tabs.", "- Use spaces.")
    [entry] = [e for e in plan_of(post(client, files)) if e["target"] == "agent.md"]
    assert entry["action"] == "skipped"
    assert "web/agent.md@v9 is not a version of a document here" in entry["detail"]
    assert not ChangeRequest.objects.exists()
