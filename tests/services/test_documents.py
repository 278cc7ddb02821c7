"""The one write path: versions, history, edits, secrets, paths (edit locks:
`test_document_locks.py`)."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import (
    AlreadyExists,
    InvalidInput,
    Locked,
    NotFound,
    SecretDetected,
    VersionConflict,
)
from agentdocs.models import Document
from agentdocs.selectors import documents as document_selectors
from agentdocs.services import document_locks
from agentdocs.services import documents as svc
from agentdocs.validation.documents import MAX_BODY_BYTES

pytestmark = pytest.mark.django_db


@pytest.fixture
def doc(project, writer):
    return svc.document_create(
        project=project, path="agent.md", body="# Rules\n- one\n", user=writer, reason="start"
    )


def history_rows(document: Document):
    return list(document.history.order_by("history_id"))


def test_create_sets_version_hash_size_and_history(doc, writer):
    assert doc.version == 1
    assert doc.sha256 == svc.sha256_of("# Rules\n- one\n")
    assert doc.size == len(b"# Rules\n- one\n")
    [row] = history_rows(doc)
    assert (row.version, row.history_user, row.history_change_reason, row.change_type) == (
        1,
        writer,
        "start",
        "created",
    )


def test_every_kind_of_write_is_a_history_entry_with_writer_and_reason(doc, writer, admin):
    doc = svc.document_write(
        document=doc, body="# Rules\n- two\n", base_version=1, user=writer, reason="w"
    ).document
    doc = svc.document_edit(
        document=doc, old="two", new="three", base_version=2, user=admin, reason="e"
    )
    doc = svc.document_delete(document=doc, base_version=3, user=admin, reason="d")
    doc = svc.document_revert(document=doc, version=2, user=writer, reason="back")
    doc = svc.document_revert(document=doc, version=1, user=writer, reason="older")
    rows = history_rows(doc)
    assert [
        (r.version, r.change_type, r.history_user.username, r.history_change_reason) for r in rows
    ] == [
        (1, "created", "bob", "start"),
        (2, "written", "bob", "w"),
        (3, "edited", "alice", "e"),
        (4, "deleted", "alice", "d"),
        (5, "restored", "bob", "back"),
        (6, "reverted", "bob", "older"),
    ]
    assert doc.body == "# Rules\n- one\n" and not doc.is_deleted
    # Nothing is lost: every body is still there.
    assert [r.body for r in rows][:3] == [
        "# Rules\n- one\n",
        "# Rules\n- two\n",
        "# Rules\n- three\n",
    ]


def test_identical_body_creates_no_new_version(doc, writer):
    same = svc.document_write(document=doc, body=doc.body, base_version=1, user=writer).document
    assert same.version == 1
    assert len(history_rows(doc)) == 1


def test_stale_version_is_refused_and_nothing_is_written(doc, writer):
    svc.document_write(document=doc, body="v2", base_version=1, user=writer)
    with pytest.raises(VersionConflict) as conflict:
        svc.document_write(document=doc, body="lost?", base_version=1, user=writer)
    assert conflict.value.current_version == 2
    doc.refresh_from_db()
    assert doc.body == "v2" and doc.version == 2
    assert len(history_rows(doc)) == 2


@pytest.mark.parametrize(("old", "message"), [("absent", "does not occur"), ("e", "occurs")])
def test_edit_needs_exactly_one_match(doc, writer, old, message):
    with pytest.raises(InvalidInput, match=message) as error:
        svc.document_edit(document=doc, old=old, new="x", base_version=1, user=writer)
    assert error.value.field == "old"
    doc.refresh_from_db()
    assert doc.version == 1


def test_overlapping_matches_are_several_matches(project, writer):
    doc = svc.document_create(project=project, path="o.md", body="xababax", user=writer)
    with pytest.raises(InvalidInput, match="occurs 2 times") as error:
        svc.document_edit(document=doc, old="aba", new="-", base_version=1, user=writer)
    assert error.value.field == "old"
    many = svc.document_create(project=project, path="m.md", body="a" * 5000, user=writer)
    with pytest.raises(InvalidInput, match="occurs at least 100 times"):
        svc.document_edit(document=many, old="a", new="b", base_version=1, user=writer)


def test_an_edit_of_a_locked_document_is_refused_as_locked_whatever_it_names(doc, writer, admin):
    document_locks.document_lock(document=doc, user=writer, ttl_seconds=60)
    for old in ("one", "absent"):
        with pytest.raises(Locked):
            svc.document_edit(document=doc, old=old, new="x", base_version=1, user=admin)
    doc.refresh_from_db()
    assert doc.version == 1


def test_edit_with_empty_old_is_refused(doc, writer):
    with pytest.raises(InvalidInput):
        svc.document_edit(document=doc, old="", new="x", base_version=1, user=writer)


def test_create_on_an_existing_path_is_refused(doc, writer, project):
    with pytest.raises(AlreadyExists):
        svc.document_create(project=project, path="agent.md", body="again", user=writer)


def test_create_after_delete_continues_the_version_line(doc, writer, project):
    svc.document_delete(document=doc, base_version=1, user=writer)
    again = svc.document_create(project=project, path="agent.md", body="fresh", user=writer)
    assert again.pk == doc.pk and again.version == 3 and not again.is_deleted


def test_writing_a_deleted_document_is_not_found(doc, writer):
    svc.document_delete(document=doc, base_version=1, user=writer)
    with pytest.raises(NotFound):
        svc.document_write(document=doc, body="x", base_version=2, user=writer)
    with pytest.raises(NotFound):
        document_selectors.document_get(project=doc.project, path="agent.md")


def test_revert_to_a_missing_version(doc, writer):
    with pytest.raises(NotFound) as error:
        svc.document_revert(document=doc, version=9, user=writer)
    assert error.value.field == "version"


SECRETS = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    # Not AWS's documented examples (AKIAIOSFODNN7EXAMPLE, wJalr...EXAMPLEKEY): those
    # are placeholders, see tests/core/test_secret_scan.py.
    "aws: AKIA2E0A8F3B7C9D1E5Q",
    "token ghp_" + "a" * 36,
    "xoxb-1234567890-abcdefghij",
    "key sk-ant-api03-" + "Xy7q" * 8,  # not `xxxx`: that is an elided key
    "OPENAI sk-" + "A1b2" * 10,
    "password = hunter22",
    'api_key: "abcd1234efgh"',
    "DATABASE_URL=postgres://app:s3cretpw@db.internal/app",
    "DB_PASSWORD=hunter2hunter",
    "export MYSQL_PASSWORD=abcd1234",
    "aws_secret_access_key = q7Rk2VfT9bLmX4cN8wYs1ZdPuG6hJa3KeE0iOyBt",
    "password: hunter2hunter",
    "  password: hunter2hunter  # production",
    "token = 'a1b2c3d4e5f6g7h8'",
    "SLACK_TOKEN=xyz123abc456",
    "API_KEY_PROD=abcd1234",
    "Authorization: Bearer abc123def456ghi789",
    "curl -H 'Authorization: Basic dXNlcjpwYXNzMTIz' https://example.com",
    'PASSWORD: "correct horse battery staple"',
    "  db_password: s3cr3tpass",
    "GITHUB_TOKEN: gh1234567890abcdef",
    '{"token": "9f8e7d6c5b4a39281706"}',
    'NPM_TOKEN: "npm_abcdef1234567890"',
    'secret = "abc(def)123"',
    "REDIS_URL=redis://:s3cretpass@redis:6379/0",
    "PGPASSWORD=hunter2xyz psql",
    'password: str = "hunter2hunter"',
    "DB_PASSWORD=supersecret",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_secret_like_content_is_refused_naming_the_line(project, writer, secret):
    body = f"# Rules\n\nSome prose.\n{secret}\nmore\n"
    with pytest.raises(SecretDetected) as error:
        svc.document_create(project=project, path="agent.md", body=body, user=writer)
    assert error.value.extra["line"] == 4
    assert "Line 4" in error.value.detail
    assert not Document.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    "prose",
    [
        "Passwords live in the vault: see vault-access.md.",
        "password = <from the vault>",
        "Set `api_key = ${API_KEY}` from the environment.",
        "Never write a line like password = … here.",
        "The token budget is 32 KiB.",
        "Password: never commit one.",
        "password: rotate monthly",
        "password: ${DB_PASSWORD}",
        "password_policy: min12chars",
        "max_tokens = 4000",
        "token = 4000",
        "Authorization: Bearer <token>",
        "Send `Authorization: Bearer $TOKEN` with every call.",
        "passport = ABC123",
        "MYSQL_ROOT_PASSWORD_FILE=/run/secrets/db",
        'DB_PASSWORD = os.environ["DB_PASSWORD"]',
        'DJANGO_SECRET_KEY = env("DJANGO_SECRET_KEY")',
        "api_key = settings.API_KEY",
        "- Password: 1Password",
        "secret: AES-256",
        "- password: argon2id",
        "pwd: /workspace/app2",
        "GET /items?page_token=abc123def",
        "Ticket token: PROJ-12345",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        'token: "{{ secrets.GITHUB_TOKEN }}"',
        "create_user(username=username, password=password)",
        "password = self.password",
        "const secret = req.body.secret;",
        "const password = await bcrypt.hash(plain, 10)",
        "password: argon2id",
        "secret: AES-256-GCM",
        "Password: sha256-hashed",
        "csrf-token: abc123def456ghi",
        'pagination_token = "CAEQAA1234abc"',
        "Authorization: Basic authentication is not supported.",
        "SECRET_KEY=${SECRET_KEY}",
        '"ClientSecret": "CLIENT_SECRET",',
        'api_key = "YOUR_API_KEY"',
        "PWD: '/Users/maciej'",
        'password = "/run/secrets/db"',
        "Proxies take `http://user:pass@proxy:8080`.",
        "e.g. `postgres://user:password@host:5432/agentdocs`",
    ],
)
def test_prose_about_secrets_is_accepted(project, writer, prose):
    doc = svc.document_create(project=project, path="agent.md", body=prose, user=writer)
    assert doc.version == 1


def test_secret_added_by_an_edit_is_refused(doc, writer):
    with pytest.raises(SecretDetected):
        svc.document_edit(
            document=doc, old="- one", new="- one\npassword = hunter22", base_version=1, user=writer
        )


BAD_PATHS = [
    "",
    "/agent.md",
    "../agent.md",
    "notes/../../x.md",
    "notes//x.md",
    "notes/",
    "notes\\x.md",
    "./agent.md",
    "a" * 256,
    "bad\x00name.md",
    " agent.md",
    123,
    None,
]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_bad_paths_are_refused(project, writer, path):
    with pytest.raises(InvalidInput) as error:
        svc.document_create(project=project, path=path, body="x", user=writer)
    assert error.value.field == "path"
    assert not Document.objects.exists()


@pytest.mark.parametrize("path", ["agent.md", "notes/team.md", ".AGENTS/overview.md", "a" * 255])
def test_good_paths_are_accepted(project, writer, path):
    assert svc.document_create(project=project, path=path, body="x", user=writer).path == path


LOOK_ALIKES_OF_VANCE = [
    "_VANCE",
    "_Vance",
    "\uff3fvance",  # FULLWIDTH LOW LINE
    "\uff3f\uff56\uff41\uff4e\uff43\uff45",  # all fullwidth
    "_v\u0430nce",  # CYRILLIC SMALL LETTER A
    "_\u0475\u0430n\u0441\u0435",  # Cyrillic izhitsa, a, es, ie
    "_va\u039dce",  # GREEK CAPITAL LETTER NU
    "_vance\u200b",  # ZERO WIDTH SPACE
    "_\u200dvan\u00adce",  # ZERO WIDTH JOINER, SOFT HYPHEN
    "_vance\ufe0f",  # VARIATION SELECTOR-16
    "_\U0001d42fance",  # MATHEMATICAL BOLD SMALL V
]


@pytest.mark.parametrize("folder", LOOK_ALIKES_OF_VANCE)
def test_a_folder_that_looks_like_vance_is_refused_for_everyone(project, writer, admin, folder):
    for user in (writer, admin):
        with pytest.raises(InvalidInput) as error:
            svc.document_create(project=project, path=f"{folder}/x.md", body="x", user=user)
        assert error.value.field == "path"
        assert "looks like the reserved `_vance`" in error.value.detail
    with pytest.raises(InvalidInput):
        svc.document_create(project=project, path=folder, body="x", user=admin)
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "path", ["_vance/x.md", "notes/_VANCE/x.md", "_vanced/x.md", "vance/x.md", "_vanc/x.md"]
)
def test_the_reserved_folder_itself_and_names_merely_near_it_are_accepted(project, admin, path):
    assert svc.document_create(project=project, path=path, body="x", user=admin).path == path


def test_body_limit_counts_bytes(project, writer):
    at_limit = "é" * (MAX_BODY_BYTES // 2)
    svc.document_create(project=project, path="a.md", body=at_limit, user=writer)
    with pytest.raises(InvalidInput) as error:
        svc.document_create(project=project, path="b.md", body=at_limit + "x", user=writer)
    assert error.value.field == "body"


@pytest.mark.parametrize("body", [None, 5, ["x"], "nul\x00byte"])
def test_bad_bodies_are_refused(project, writer, body):
    with pytest.raises(InvalidInput):
        svc.document_create(project=project, path="a.md", body=body, user=writer)
