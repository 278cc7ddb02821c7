"""Reading by label (issue 29): renders, previews, exports, bindings and the runs
timeline read each document at its version under a label, or at its latest where it
has none; the canary scenario end to end through the API; queries per render stay
constant with labels in use."""

from __future__ import annotations

import uuid

import pytest

from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
MB = f"{BASE}/memory-block/"
AGENT = f"{BASE}/documents/agent.md"


@pytest.fixture
def canary(tenant, project, admin, writer, make_document, api):
    """agent.md at v1 ("stable rule") labelled production, then v2 ("new rule")
    labelled canary; .AGENTS/notes.md with no label; the recipes coder (canary) and
    summarizer (production)."""
    document = make_document(project, "agent.md", "# Rules\n- stable rule\n", user=writer)
    make_document(project, ".AGENTS/notes.md", "Some notes.\n", user=writer)
    policy_service.recipe_create(
        tenant=tenant, name="coder", params={"label": "canary"}, profiles={}, user=admin
    )
    policy_service.recipe_create(
        tenant=tenant, name="summarizer", params={"label": "production"}, profiles={}, user=admin
    )
    assert _move(api(admin), "production", 1).status_code == 201
    document_service.document_write(
        document=document,
        body="# Rules\n- new rule\n",
        base_version=1,
        user=writer,
        reason="try the new rule",
    )
    assert _move(api(writer), "canary", 2).status_code == 201
    return document


def _move(client, label, version):
    return client.put(
        f"{AGENT}/labels/{label}", {"version": version, "reason": "move"}, format="json"
    )


def _render(client, recipe=None, **extra):
    body = {"process": f"{recipe}-{uuid.uuid4()}", **extra}
    if recipe:
        body["recipe"] = recipe
    response = client.post(MB, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _layer(block, kind):
    return next(layer for layer in block["layers"] if layer["kind"] == kind)


def test_the_canary_edit_reaches_coder_only_and_one_move_promotes_it(api, canary, reader, admin):
    client = api(reader)
    coder = _render(client, "coder")
    assert "new rule" in coder["text"] and "stable rule" not in coder["text"]
    assert coder["label"] == "canary"
    notes = _layer(coder, "agent_notes")
    assert (notes["version"], notes["label"], notes["label_fallback"]) == (2, "canary", False)
    context = _layer(coder, "context")
    assert context["label"] == "canary" and context["label_fallback"] is True

    summarizer = _render(client, "summarizer")
    assert "stable rule" in summarizer["text"] and "new rule" not in summarizer["text"]
    notes = _layer(summarizer, "agent_notes")
    assert (notes["version"], notes["label"], notes["label_fallback"]) == (1, "production", False)

    # No label: latest, and the account says so.
    plain = _render(client)
    assert "new rule" in plain["text"] and plain["label"] is None
    assert _layer(plain, "agent_notes")["label"] is None
    assert _layer(plain, "agent_notes")["label_fallback"] is False

    # Promoting is one label move; the very next render sees it.
    assert _move(api(admin), "production", 2).status_code == 200
    promoted = _render(client, "summarizer")
    assert "new rule" in promoted["text"]
    assert _layer(promoted, "agent_notes")["version"] == 2


def test_a_request_label_overrides_the_recipe_s_and_falls_back_to_latest(api, canary, reader):
    client = api(reader)
    block = _render(client, "coder", label="production")
    assert "stable rule" in block["text"] and block["label"] == "production"
    missing = _render(client, "coder", label="staging")
    assert "new rule" in missing["text"]
    notes = _layer(missing, "agent_notes")
    assert (notes["label"], notes["label_fallback"], notes["version"]) == ("staging", True, 2)
    latest = _render(client, "coder", label="latest")
    assert latest["label"] is None and "new rule" in latest["text"]
    bad = client.post(MB, {"process": "p", "label": "Not A Label"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "label"


def test_preview_and_export_take_label(api, canary, reader):
    client = api(reader)
    preview = client.get(MB, {"label": "production"})
    assert preview.status_code == 200 and "stable rule" in preview.json()["text"]
    assert "new rule" in client.get(MB, {"label": "canary"}).json()["text"]
    exported = client.get(f"{BASE}/export/", {"format": "agents-md", "label": "production"})
    assert exported.status_code == 200, exported.content
    texts = "".join(f["content"] for f in exported.json()["files"])
    assert "stable rule" in texts and "new rule" not in texts
    latest = client.get(f"{BASE}/export/", {"format": "agents-md"}).json()
    assert "new rule" in "".join(f["content"] for f in latest["files"])


def test_a_recipe_label_must_be_a_slug(api, tenant, admin):
    response = api(admin).post(
        "/api/v1/tenants/acme/recipes/",
        {"name": "bad", "params": {"label": "Prod!"}},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "params.label"


def test_binding_records_keep_the_label_and_the_timeline_shows_it(api, canary, writer, admin):
    client = api(writer)
    for run in range(2):
        for recipe in ("coder", "summarizer"):
            response = client.post(
                f"{BASE}/bindings/",
                {"process": f"{recipe}-{run}", "manifest": {}, "memory_block": {"recipe": recipe}},
                format="json",
            )
            assert response.status_code == 201, response.content
            block = response.json()["memory_block"]
            assert block["label"] == ("canary" if recipe == "coder" else "production")
            candidate = next(c for c in block["agent_candidates"] if c["project"] == "web")
            assert candidate["label"] == block["label"]
            assert candidate["version"] == (2 if recipe == "coder" else 1)
            context = block["context_documents"][0]
            assert context["label"] is None  # no such label: latest
    segments = client.get(f"{BASE}/bindings/timeline").json()["segments"]
    agent = [s for s in segments if s["source"] == "agent:web/agent.md"]
    assert {(s["label"], s["version"]) for s in agent} == {("canary", 2), ("production", 1)}
    # A record bound by label is restored byte for byte.
    record_id = response.json()["id"]
    rebuilt = client.get(f"{BASE}/bindings/{record_id}/reconstruct").json()
    assert rebuilt["memory_block"]["verified"] is True


def test_queries_per_render_stay_constant_with_labels(
    api,
    canary,
    reader,
    admin,
    project,
    make_document,
    signing_key,
    settings,
    django_assert_num_queries,
):
    settings.AGENTDOCS_RENDER_CACHE = False
    client = api(reader)
    _render(client, "coder")  # the token's first use
    with django_assert_num_queries(2):
        _render(client, "coder")
    for number in range(20):
        document = make_document(project, f".AGENTS/more-{number}.md", f"more {number}\n")
        document = document_service.document_write(
            document=document, body=f"more {number} v2\n", base_version=1, user=admin
        ).document
        if number % 2:
            assert (
                api(admin)
                .put(
                    f"{BASE}/documents/.AGENTS/more-{number}.md/labels/canary",
                    {"version": 1},
                    format="json",
                )
                .status_code
                == 201
            )
    with django_assert_num_queries(2):
        block = _render(client, "coder")
    assert "more 1\n" in block["text"] and "more 2 v2" in block["text"]
    with django_assert_num_queries(2):
        _render(client, "summarizer", label="canary")


def test_the_render_cache_keys_rows_by_label_and_a_move_retires_them(
    api, canary, reader, admin, settings
):
    settings.AGENTDOCS_RENDER_CACHE = True
    client = api(reader)
    # Cached per label: one label's rows never answer another's.
    assert "new rule" in _render(client, "coder")["text"]
    assert "stable rule" in _render(client, "summarizer")["text"]
    assert "stable rule" in _render(client, label="production")["text"]
    assert "new rule" in _render(client, label="canary")["text"]
    # A move is seen on the very next render.
    assert _move(api(admin), "production", 2).status_code == 200
    assert "new rule" in _render(client, "summarizer")["text"]
    assert "new rule" in _render(client, label="production")["text"]
    assert api(admin).delete(f"{AGENT}/labels/canary").status_code == 204
    block = _render(client, "coder")
    assert _layer(block, "agent_notes")["label_fallback"] is True
