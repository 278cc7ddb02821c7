"""The project page's cascade summary and the Memory Block preview."""

from __future__ import annotations

import re

import pytest

from agentdocs.services import documents as svc
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

PREVIEW = "/t/acme/web/memory-block/"


def test_project_page_lists_documents_with_version_size_author_and_time(browse, reader, agent_md):
    page = browse(reader).get("/t/acme/web/").content.decode()
    assert "/t/acme/web/doc/agent.md" in page
    assert 'title="History of agent.md">v1</a>' in page  # not just any "v1": CSRF tokens
    assert "bytes" in page and "bob" in page and "just now" in page


def test_project_with_own_agent_md_says_so_and_names_what_it_shadows(
    browse, reader, agent_md, vance_md
):
    page = browse(reader).get("/t/acme/web/").content.decode()
    assert "own agent.md" in page
    assert 'href="/t/acme/web/doc/agent.md"' in page
    assert "Shadows" in page and 'href="/t/acme/_vance/doc/agent.md"' in page


def test_project_without_agent_md_inherits_from_vance_and_links_the_source(
    browse, reader, project, vance_md
):
    page = browse(reader).get("/t/acme/web/").content.decode()
    assert "inherited from _vance" in page
    assert 'href="/t/acme/_vance/doc/agent.md"' in page
    assert "## Agent Notes (from _vance: agent.md)" in page


def test_project_with_no_agent_notes_anywhere_says_none(browse, writer, project):
    page = browse(writer).get("/t/acme/web/").content.decode()
    assert "agents here get no agent notes" in page
    assert "/t/acme/web/new/?path=agent.md" in page


def test_bundled_default_is_named_as_such(browse, reader, project, settings, tmp_path):
    (tmp_path / "agent.md").write_text("# Default rules\n")
    settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR = tmp_path
    page = browse(reader).get("/t/acme/web/").content.decode()
    assert "bundled default" in page


def test_memory_block_preview_shows_the_inherited_heading_and_layers(
    browse, reader, project, vance_md, make_document
):
    make_document(project, ".AGENTS/overview.md", "# Overview\n")
    page = browse(reader).get("/t/acme/web/memory-block/").content.decode()
    assert "## Agent Notes (from _vance: agent.md)" in page
    assert "Be kind." in page
    assert 'href="/t/acme/_vance/doc/agent.md?version=1"' in page
    assert "&lt;context path=&quot;.AGENTS/overview.md&quot;&gt;" in page
    assert "Project context" in page and "Policy" in page
    # Every .AGENTS/ source shows the version it was read at, beside its size.
    assert "v1 · 11 B" in page


def test_memory_block_preview_marks_truncated_and_dropped_context(
    browse, admin, reader, tenant, project, make_document
):
    policy_service.recipe_create(
        tenant=tenant, name="tight", params={"contextBudgetBytes": 600}, profiles={}, user=admin
    )
    make_document(project, ".AGENTS/overview.md", "o" * 500)
    make_document(project, ".AGENTS/conventions.md", "c" * 400)
    make_document(project, ".AGENTS/zeta.md", "z" * 100)
    page = browse(reader).get("/t/acme/web/memory-block/?recipe=tight").content.decode()
    assert "badge-dropped" in page and 'badge-dropped">dropped' in page
    assert 'aria-valuenow="500"' in page and 'aria-valuemax="600"' in page


def test_memory_block_preview_with_a_recipe_that_turns_agent_notes_off(
    browse, admin, reader, tenant, project, vance_md
):
    policy_service.recipe_create(
        tenant=tenant, name="summarizer", params={"agentDocument": None}, profiles={}, user=admin
    )
    page = browse(reader).get("/t/acme/web/memory-block/?recipe=summarizer").content.decode()
    assert "## Agent Notes" not in page.split("Layers", 1)[1]
    assert "turns the agent document off" in page


def test_memory_block_preview_unknown_recipe_is_an_error_beside_the_field(browse, reader, project):
    response = browse(reader).get("/t/acme/web/memory-block/?recipe=nosuch")
    assert response.status_code == 404  # the domain error's status, as on the API
    assert "No recipe &#x27;nosuch&#x27;" in response.content.decode()


def test_memory_block_preview_touches_no_read_state(browse, reader, project, agent_md):
    def agent_notes_state(process: str) -> str:
        block = memory_block_service.render_memory_block(
            project=project, process=process, caller="token:1"
        )
        return next(layer.state for layer in block.layers if layer.kind == "agent_notes")

    assert agent_notes_state("p1") == "full"
    assert browse(reader).get("/t/acme/web/memory-block/").status_code == 200
    # The preview neither reset the process that had read the notes...
    assert agent_notes_state("p1") == "unchanged"
    # ...nor marked anything as read for a process that had not.
    assert agent_notes_state("p2") == "full"


def test_an_edit_is_visible_in_the_next_preview(browse, writer, agent_md):
    client = browse(writer)
    svc.document_write(document=agent_md, body="# Fresh rule\n", base_version=1, user=writer)
    assert "# Fresh rule" in client.get("/t/acme/web/memory-block/").content.decode()


@pytest.fixture
def recipes(admin, tenant):
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={},
        profiles={"cli": {"useClientAgentDoc": True}, "ide": {}},
        user=admin,
    )
    policy_service.recipe_create(
        tenant=tenant, name="summarizer", params={}, profiles={"batch": {}}, user=admin
    )


def _profile_options(page: str) -> list[str]:
    select = page[
        page.index('name="profile"') : page.index("</select>", page.index('name="profile"'))
    ]
    return re.findall(r'<option value="([^"]*)"', select)


def test_memory_block_preview_offers_only_the_recipes_profiles(browse, reader, project, recipes):
    client = browse(reader)

    assert _profile_options(client.get(PREVIEW + "?recipe=coder").content.decode()) == [
        "",
        "cli",
        "ide",
    ]
    assert _profile_options(client.get(PREVIEW + "?recipe=summarizer").content.decode()) == [
        "",
        "batch",
    ]
    assert _profile_options(client.get(PREVIEW).content.decode()) == [""]


def test_a_profile_left_over_from_another_recipe_is_set_aside_not_an_error(
    browse, reader, project, recipes
):
    response = browse(reader).get(PREVIEW + "?recipe=summarizer&profile=cli")

    page = response.content.decode()
    assert response.status_code == 200
    assert "summarizer has no profile cli: shown without a profile." in page
    assert 'id="layers-title"' in page  # the block is there, not an empty page


def test_memory_block_preview_renders_a_pasted_client_document(
    browse, reader, project, recipes, agent_md
):
    client = browse(reader)
    data = {
        "recipe": "coder",
        "profile": "cli",
        "client_document_name": "CLAUDE.md",
        "client_document_body": "# Mine\n\n- Use the client's rule.\n",
    }

    response = client.post(PREVIEW, data, HTTP_HX_REQUEST="true")

    page = response.content.decode()
    assert response.status_code == 200
    assert "- Use the client&#x27;s rule." in page.split("Layers", 1)[1]
    assert response["HX-Push-Url"] == PREVIEW + "?recipe=coder&profile=cli"
    ignored = client.post(PREVIEW, {**data, "profile": "ide"}).content.decode()
    assert "- Use the client&#x27;s rule." not in ignored.split("Layers", 1)[1]


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"client_document_name": "", "client_document_body": "x"}, "client_document_name", "name"),
        (
            {"client_document_name": "a\nb", "client_document_body": "x"},
            "client_document_name",
            "one line",
        ),
        (
            {"client_document_name": "C.md", "client_document_body": "x" * (256 * 1024 + 1)},
            "client_document_body",
            "at most 262144 bytes",
        ),
    ],
)
def test_a_bad_client_document_is_a_400_beside_its_field(
    browse, reader, project, recipes, data, field, message
):
    response = browse(reader).post(PREVIEW, {"recipe": "coder", "profile": "cli", **data})

    assert response.status_code == 400
    errors = response.context["form"].errors[field]
    assert any(message in error for error in errors), errors


def test_an_outsider_cannot_post_to_the_preview(browse, outsider, project, recipes):
    assert browse(outsider).post(PREVIEW, {"recipe": "coder"}).status_code == 404
