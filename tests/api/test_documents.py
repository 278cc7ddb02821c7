"""The documents API contract: paths, ETags, base versions, status codes, JSON errors."""

from __future__ import annotations

import pytest

from agentdocs.models import Document
from agentdocs.services import documents as svc

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"


@pytest.fixture
def doc(project, writer):
    return svc.document_create(
        project=project, path="notes/team.md", body="# Team\n- one\n", user=writer, reason="r1"
    )


def assert_error(response, status: int, code: str, field: str | None = None):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) >= {"error", "detail", "field"}
    assert body["error"] == code, body
    assert body["detail"]
    if field is not None:
        assert body["field"] == field, body
    return body


def test_ping_needs_authentication(api, writer):
    assert api().get("/api/v1/ping").status_code in (401, 403)
    assert api(writer).get("/api/v1/ping").json() == {"ok": True}


def test_token_authentication(client, project, writer, doc):
    from tests.conftest import api_token_key

    token = api_token_key(writer)
    response = client.get(f"{BASE}/documents/notes/team.md", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200
    bad = client.get(f"{BASE}/documents/notes/team.md", HTTP_AUTHORIZATION="Token nope")
    assert_error(bad, 401, "authentication_failed")


def test_create_read_and_list(api, project, writer, reader):
    created = api(writer).post(
        f"{BASE}/documents/",
        {"path": ".AGENTS/overview.md", "body": "# Overview\n", "reason": "start"},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["version"] == 1 and created["ETag"].startswith('"v1-')

    read = api(reader).get(f"{BASE}/documents/.AGENTS/overview.md")
    assert read.status_code == 200
    body = read.json()
    assert body["body"] == "# Overview\n"
    assert body["sha256"] == svc.sha256_of("# Overview\n")
    assert body["updated_by"] == "bob" and body["lock"] is None
    assert read["ETag"] == created["ETag"]

    listing = api(reader).get(f"{BASE}/documents/").json()
    assert listing["count"] == 1
    [row] = listing["results"]
    assert set(row) == {"path", "version", "sha256", "size", "updated_at", "updated_by"}
    assert row["size"] == len(b"# Overview\n")


def test_if_none_match_gives_304(api, doc, reader):
    etag = api(reader).get(f"{BASE}/documents/notes/team.md")["ETag"]
    response = api(reader).get(f"{BASE}/documents/notes/team.md", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert response["ETag"] == etag


def test_put_with_etag_then_stale_etag(api, doc, writer):
    client = api(writer)
    etag = client.get(f"{BASE}/documents/notes/team.md")["ETag"]
    ok = client.put(
        f"{BASE}/documents/notes/team.md",
        {"body": "# Team\n- two\n", "reason": "more"},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert ok.status_code == 200 and ok.json()["version"] == 2
    stale = client.put(
        f"{BASE}/documents/notes/team.md", {"body": "lost"}, format="json", HTTP_IF_MATCH=etag
    )
    body = assert_error(stale, 412, "version_conflict", "version")
    assert body["current_version"] == 2
    assert Document.objects.get().body == "# Team\n- two\n"


def test_put_with_version_field(api, doc, writer):
    ok = api(writer).put(
        f"{BASE}/documents/notes/team.md", {"body": "new", "version": 1}, format="json"
    )
    assert ok.status_code == 200 and ok.json()["version"] == 2


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_writes_without_a_base_version_get_428(api, doc, writer, method):
    data = {"put": {"body": "x"}, "patch": {"old": "one", "new": "two"}, "delete": {}}[method]
    response = getattr(api(writer), method)(f"{BASE}/documents/notes/team.md", data, format="json")
    assert_error(response, 428, "version_required", "version")
    assert Document.objects.get().version == 1


def test_disagreeing_if_match_and_version_field(api, doc, writer):
    response = api(writer).put(
        f"{BASE}/documents/notes/team.md",
        {"body": "x", "version": 2},
        format="json",
        HTTP_IF_MATCH='"v1-abc"',
    )
    assert_error(response, 400, "invalid", "version")


def test_patch_replaces_one_unique_occurrence(api, doc, writer):
    response = api(writer).patch(
        f"{BASE}/documents/notes/team.md",
        {"old": "- one", "new": "- uno", "reason": "translate", "version": 1},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["body"] == "# Team\n- uno\n"
    ambiguous = api(writer).patch(
        f"{BASE}/documents/notes/team.md", {"old": "\n", "new": " ", "version": 2}, format="json"
    )
    assert_error(ambiguous, 400, "invalid", "old")


def test_delete_then_history_and_revert(api, doc, writer):
    client = api(writer)
    deleted = client.delete(
        f"{BASE}/documents/notes/team.md", {"version": 1, "reason": "gone"}, format="json"
    )
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert_error(client.get(f"{BASE}/documents/notes/team.md"), 404, "not_found", "path")
    history = client.get(f"{BASE}/history/notes/team.md").json()["results"]
    assert [(h["version"], h["change_type"]) for h in history] == [(2, "deleted"), (1, "created")]
    reverted = client.post(
        f"{BASE}/revert/notes/team.md", {"version": 1, "reason": "oops"}, format="json"
    )
    assert reverted.status_code == 200
    assert reverted.json()["version"] == 3 and reverted.json()["body"] == "# Team\n- one\n"


def test_history_is_newest_first_paginated_with_bodies_by_version(api, doc, writer):
    client = api(writer)
    for n in range(2, 6):
        svc.document_write(
            document=doc, body=f"v{n}", base_version=n - 1, user=writer, reason=f"r{n}"
        )
    page = client.get(f"{BASE}/history/notes/team.md?page_size=2").json()
    assert page["count"] == 5
    assert [h["version"] for h in page["results"]] == [5, 4]
    entry = page["results"][0]
    assert set(entry) >= {"version", "sha256", "user", "date", "reason", "change_type"}
    assert (entry["user"], entry["reason"], entry["change_type"]) == ("bob", "r5", "written")
    one = client.get(f"{BASE}/history/notes/team.md?version=1").json()
    assert one["body"] == "# Team\n- one\n" and one["version"] == 1
    assert_error(client.get(f"{BASE}/history/notes/team.md?version=99"), 404, "not_found")
    assert_error(client.get(f"{BASE}/history/notes/team.md?version=x"), 400, "invalid", "version")


def test_diff_gives_unified_text_and_hunks(api, doc, writer):
    svc.document_write(document=doc, body="# Team\n- two\n", base_version=1, user=writer)
    response = api(writer).get(f"{BASE}/diff/notes/team.md?from=1&to=2")
    assert response.status_code == 200
    body = response.json()
    assert "-- one" in body["diff"] and "+- two" in body["diff"]
    [hunk] = body["hunks"]
    assert [(line["op"], line["text"]) for line in hunk["lines"]] == [
        (" ", "# Team"),
        ("-", "- one"),
        ("+", "- two"),
    ]
    assert (body["added"], body["removed"]) == (1, 1)
    assert_error(api(writer).get(f"{BASE}/diff/notes/team.md"), 400, "invalid", "from")


def test_lock_endpoints(api, doc, writer, admin):
    taken = api(writer).post(f"{BASE}/lock/notes/team.md", {"ttl_seconds": 120}, format="json")
    assert taken.status_code == 200 and taken.json()["lock"]["holder"] == "bob"
    blocked = api(admin).put(
        f"{BASE}/documents/notes/team.md", {"body": "x", "version": 1}, format="json"
    )
    body = assert_error(blocked, 423, "locked")
    assert body["lock"]["holder"] == "bob"
    assert_error(api(admin).delete(f"{BASE}/lock/notes/team.md"), 423, "locked")
    broken = api(admin).delete(f"{BASE}/lock/notes/team.md", {"force": True}, format="json")
    assert broken.status_code == 200
    assert api(admin).get(f"{BASE}/documents/notes/team.md").json()["lock"] is None


def test_writer_cannot_force_a_lock(api, doc, writer, admin):
    api(admin).post(f"{BASE}/lock/notes/team.md", format="json")
    response = api(writer).post(f"{BASE}/lock/notes/team.md", {"force": True}, format="json")
    assert_error(response, 403, "forbidden")


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"path": "../x.md", "body": "x"}, "path"),
        ({"path": "/abs.md", "body": "x"}, "path"),
        ({"path": "a" * 300, "body": "x"}, "path"),
        ({"path": "x.md", "body": "x" * (256 * 1024 + 1)}, "body"),
        ({"path": "x.md", "body": 42}, "body"),
        ({"path": ["x.md"], "body": "x"}, "path"),
        ({"body": "x"}, "path"),
        ({"path": "x.md"}, "body"),
        ({"path": "x.md", "body": "x", "reason": 5}, "reason"),
        ({"path": "x.md", "body": "x", "colour": "red"}, "colour"),
        ({"path": "x.md", "body": "ok\npassword = hunter22\n"}, "body"),
    ],
)
def test_bad_input_gets_a_json_error_naming_the_field_and_changes_nothing(
    api, project, writer, payload, field
):
    response = api(writer).post(f"{BASE}/documents/", payload, format="json")
    assert 400 <= response.status_code < 500
    assert response.json()["field"] == field, response.json()
    assert not Document.objects.exists()


def test_secret_error_names_the_line(api, project, writer):
    response = api(writer).post(
        f"{BASE}/documents/",
        {"path": "x.md", "body": "# ok\nfine\n-----BEGIN RSA PRIVATE KEY-----\n"},
        format="json",
    )
    body = assert_error(response, 422, "secret_detected", "body")
    assert body["line"] == 3 and "Line 3" in body["detail"]


def test_malformed_json_is_a_json_error(api, project, writer):
    response = api(writer).post(f"{BASE}/documents/", "{not json", content_type="application/json")
    assert_error(response, 400, "parse_error")


def test_a_json_array_body_is_refused(api, project, writer):
    response = api(writer).post(f"{BASE}/documents/", ["x"], format="json")
    assert_error(response, 400, "invalid")


def test_create_on_existing_path_is_409(api, doc, writer):
    response = api(writer).post(
        f"{BASE}/documents/", {"path": "notes/team.md", "body": "x"}, format="json"
    )
    body = assert_error(response, 409, "already_exists", "path")
    assert body["current_version"] == 1


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("post", f"{BASE}/documents/", {"path": "n.md", "body": "x"}),
        ("put", f"{BASE}/documents/notes/team.md", {"body": "x", "version": 1}),
        ("patch", f"{BASE}/documents/notes/team.md", {"old": "one", "new": "2", "version": 1}),
        ("delete", f"{BASE}/documents/notes/team.md", {"version": 1}),
        ("post", f"{BASE}/revert/notes/team.md", {"version": 1}),
        ("post", f"{BASE}/lock/notes/team.md", {}),
    ],
)
def test_reader_cannot_write(api, doc, reader, method, url, data):
    response = getattr(api(reader), method)(url, data, format="json")
    assert_error(response, 403, "forbidden")
    assert Document.objects.get().version == 1


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("get", f"{BASE}/documents/", None),
        ("post", f"{BASE}/documents/", {"path": "n.md", "body": "x"}),
        ("get", f"{BASE}/documents/notes/team.md", None),
        ("put", f"{BASE}/documents/notes/team.md", {"body": "x", "version": 1}),
        ("patch", f"{BASE}/documents/notes/team.md", {"old": "one", "new": "2", "version": 1}),
        ("delete", f"{BASE}/documents/notes/team.md", {"version": 1}),
        ("get", f"{BASE}/history/notes/team.md", None),
        ("get", f"{BASE}/diff/notes/team.md?from=1", None),
        ("post", f"{BASE}/revert/notes/team.md", {"version": 1}),
        ("post", f"{BASE}/lock/notes/team.md", {}),
        ("delete", f"{BASE}/lock/notes/team.md", {}),
    ],
)
def test_outsider_gets_404_for_everything(api, doc, outsider, other_tenant, method, url, data):
    response = getattr(api(outsider), method)(url, data, format="json")
    assert_error(response, 404, "not_found", "tenant")
    assert Document.objects.get().version == 1


def test_writer_cannot_write_the_reserved_space(api, vance, project, writer, admin):
    client = api(writer)
    in_vance = client.post(
        "/api/v1/tenants/acme/projects/_vance/documents/",
        {"path": "agent.md", "body": "x"},
        format="json",
    )
    assert_error(in_vance, 403, "forbidden")
    under_prefix = client.post(
        f"{BASE}/documents/", {"path": "_vance/agent.md", "body": "x"}, format="json"
    )
    assert_error(under_prefix, 403, "forbidden", "path")
    by_admin = api(admin).post(
        "/api/v1/tenants/acme/projects/_vance/documents/",
        {"path": "agent.md", "body": "tenant rules"},
        format="json",
    )
    assert by_admin.status_code == 201
    # Members read the reserved space.
    readable = client.get("/api/v1/tenants/acme/projects/_vance/documents/agent.md")
    assert readable.status_code == 200


@pytest.mark.parametrize(
    ("folder", "code"),
    [
        ("_VANCE", "invalid"),
        ("\uff3fvance", "confusable_path"),  # a compatibility form (issue 24)
        ("_v\u0430nce", "confusable_path"),  # Cyrillic in a Latin word
        ("_vance\u200b", "invalid_path"),  # an invisible character
        ("_VAN\u200cCE", "invalid_path"),
    ],
)
def test_a_look_alike_of_the_reserved_folder_is_a_400_naming_the_path(
    api, project, writer, admin, folder, code
):
    for user in (writer, admin):
        response = api(user).post(
            f"{BASE}/documents/", {"path": f"{folder}/x.md", "body": "x"}, format="json"
        )
        assert_error(response, 400, code, "path")
    assert not Document.objects.exists()


def test_unknown_api_path_is_a_json_404(api, writer):
    response = api(writer).get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.parametrize("count", [1, 30])
def test_list_and_history_run_a_constant_number_of_queries(
    api, project, writer, count, django_assert_num_queries
):
    doc = None
    for i in range(count):
        doc = svc.document_create(project=project, path=f"d{i}.md", body="x", user=writer)
    for n in range(2, count + 2):
        doc = svc.document_write(
            document=doc, body=f"v{n}", base_version=n - 1, user=writer
        ).document
    client = api(writer)
    # token and access (1) + count (1) + page (1)
    with django_assert_num_queries(3):
        assert client.get(f"{BASE}/documents/").status_code == 200
    # token and access + document + count + page
    with django_assert_num_queries(4):
        assert client.get(f"{BASE}/history/{doc.path}").status_code == 200
    with django_assert_num_queries(2):
        assert client.get(f"{BASE}/documents/{doc.path}").status_code == 200


def test_a_long_reason_is_kept_whole_and_an_overlong_one_refused(api, doc, writer):
    reason = "Why: " + "the rule changed after the incident review. " * 11
    assert 400 < len(reason) <= 500
    ok = api(writer).put(
        f"{BASE}/documents/notes/team.md",
        {"body": "new", "reason": reason, "version": 1},
        format="json",
    )
    assert ok.status_code == 200, ok.json()
    history = api(writer).get(f"{BASE}/history/notes/team.md").json()["results"]
    assert history[0]["reason"] == reason.strip()
    too_long = api(writer).put(
        f"{BASE}/documents/notes/team.md",
        {"body": "newer", "reason": "x" * 501, "version": 2},
        format="json",
    )
    assert_error(too_long, 400, "invalid", "reason")


def test_a_version_field_may_be_a_string_of_digits_but_nothing_else(api, doc, writer):
    url = f"{BASE}/documents/notes/team.md"
    for version in ("x", "", -1, 1.5, True, "²", "1" * 5000):
        response = api(writer).put(url, {"body": "new", "version": version}, format="json")
        assert_error(response, 400, "invalid", "version")
    ok = api(writer).put(url, {"body": "new", "version": "1"}, format="json")
    assert ok.status_code == 200 and ok.json()["version"] == 2


def test_revert_takes_json_integers_only(api, doc, writer):
    url = f"{BASE}/revert/notes/team.md"
    assert_error(api(writer).post(url, {}, format="json"), 400, "invalid", "version")
    for body in ({"version": "1"}, {"version": 1, "base_version": "1"}):
        response = api(writer).post(url, body, format="json")
        assert response.status_code == 400 and response.json()["field"] in (
            "version",
            "base_version",
        )
    assert Document.objects.get().version == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"force": "yes"}, "force"),
        ({"force": 1}, "force"),
        ({"ttl_seconds": "60"}, "ttl_seconds"),
        ({"ttl_seconds": 1.5}, "ttl_seconds"),
        ({"ttl_seconds": 0}, "ttl_seconds"),
        ({"holder": "bob"}, "holder"),
    ],
)
def test_bad_lock_input_names_the_field(api, doc, writer, payload, field):
    response = api(writer).post(f"{BASE}/lock/notes/team.md", payload, format="json")
    assert_error(response, 400, "invalid", field)
    assert Document.objects.get().lock_holder is None


def test_a_delete_body_that_is_not_an_object_counts_as_none(api, doc, writer):
    response = api(writer).delete(
        f"{BASE}/documents/notes/team.md", [], format="json", HTTP_IF_MATCH='"v1-abc"'
    )
    assert response.status_code == 200 and response.json()["deleted"] is True
    assert set(response.json()) == {
        "path",
        "version",
        "sha256",
        "size",
        "updated_at",
        "updated_by",
        "deleted",
    }


def test_a_version_from_history_carries_its_path_and_body(api, doc, writer):
    one = api(writer).get(f"{BASE}/history/notes/team.md?version=1").json()
    assert (one["path"], one["body"], one["user"], one["reason"]) == (
        "notes/team.md",
        "# Team\n- one\n",
        "bob",
        "r1",
    )
    assert one["deleted"] is False and one["change_type"] == "created"
