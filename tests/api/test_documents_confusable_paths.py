"""Look-alike and invisible names (issue 24, finding 2): a new document path, an import
target or a provider name that mixes scripts as Unicode's confusable detection (UTS #39)
flags is a 400 `confusable_path`; one holding an invisible or control character is a 400
`invalid_path`; each names its field and stores nothing. Paths stored before stay
readable, writable and removable; names in one script (Japanese, Persian, Hindi,
Cyrillic, accented Latin) are accepted."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.utils import timezone

from agentdocs.core.errors import ConfusablePath, InvalidPath
from agentdocs.core.hidden_characters import find_hidden
from agentdocs.core.paths import invisible_in_name, validate_name, validate_new_path
from agentdocs.models import Document, Event, ProviderMapping
from agentdocs.services.documents import sha256_of
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
PROVIDERS = "/api/v1/tenants/acme/providers/"

# Ten look-alikes of ordinary names, each a different trick.
LOOK_ALIKES = [
    "\u0430gent.md",  # CYRILLIC SMALL LETTER A: "agent.md"
    ".AGENTS/\u043everview.md",  # CYRILLIC SMALL LETTER O: a second "overview.md"
    ".AGENTS/\u03bfverview.md",  # GREEK SMALL LETTER OMICRON
    ".AGENTS/ov\u0435rview.md",  # CYRILLIC SMALL LETTER IE inside the word
    "notes/\u0440olicy.md",  # CYRILLIC SMALL LETTER ER: "policy"
    ".AGENTS/\u0585verview.md",  # ARMENIAN SMALL LETTER OH
    "\uff41gent.md",  # FULLWIDTH LATIN SMALL LETTER A
    "\U0001d41agent.md",  # MATHEMATICAL BOLD SMALL A
    ".AGENTS/\u0430\u0440\u0456.md",  # all Cyrillic, reads as "api"
    "\u0251gent.md",  # LATIN SMALL LETTER ALPHA, a phonetic letter
]

INVISIBLE = [
    (".AGENTS/\u202etxt.md", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("a\u200bgent.md", "U+200B ZERO WIDTH SPACE"),
    ("agent\u2060.md", "U+2060 WORD JOINER"),
    ("\ufeffagent.md", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("notes/a\U000e0041.md", "U+E0041 TAG LATIN CAPITAL LETTER A"),
    ("notes/team\ufe0f.md", "U+FE0F VARIATION SELECTOR-16"),
    ("notes/te\u00adam.md", "U+00AD SOFT HYPHEN"),
    ("notes/team\u00a0a.md", "U+00A0 NO-BREAK SPACE"),
    ("notes/a\u2028b.md", "U+2028 LINE SEPARATOR"),
    # A ZWNJ belongs between Persian letters in prose, not in a file name: two names that
    # differ by it look the same.
    (".AGENTS/واژه\u200cنامه.md", "U+200C ZERO WIDTH NON-JOINER"),
    ("notes/\U0001f469\u200d\U0001f4bb.md", "U+200D ZERO WIDTH JOINER"),
]

ONE_SCRIPT_PER_WORD = [
    ".AGENTS/用語集.md",
    ".AGENTS/واژهنامه.md",
    ".AGENTS/glossário.md",
    ".AGENTS/सूची-नियम.md",
    ".AGENTS/ひらがなカタカナ漢字.md",
    "API仕様/設計.md",
    ".AGENTS/한국어.md",
    "docs/документация.md",
    ".AGENTS/Ελληνικά.md",
    ".AGENTS/για-όλους.md",  # Greek words are not taken for Latin ones
    ".AGENTS/kılavuz.md",
    ".AGENTS/straße-møde.md",
    "notes/team-2024_v2.md",
]


def create(client, path, body="x\n", **extra):
    return client.post(f"{BASE}/documents/", {"path": path, "body": body, **extra}, format="json")


# Documents ------------------------------------------------------------------------


@pytest.mark.parametrize("path", LOOK_ALIKES)
def test_a_look_alike_path_is_a_400_confusable_path_and_nothing_is_stored(
    api, project, writer, path
):
    events = Event.objects.count()
    body = assert_error(create(api(writer), path), 400, "confusable_path", "path")
    assert body["characters"] and all(c.startswith("U+") for c in body["characters"])
    assert not Document.objects.exists() and Event.objects.count() == events


def test_the_refusal_names_the_character_to_blame(api, project, writer):
    body = assert_error(
        create(api(writer), ".AGENTS/\u043everview.md"), 400, "confusable_path", "path"
    )
    assert body["characters"] == ["U+043E CYRILLIC SMALL LETTER O"]
    assert "Cyrillic and Latin" in body["detail"]


def test_a_path_in_decomposed_form_is_a_look_alike_of_the_composed_one(api, project, writer):
    assert_error(create(api(writer), ".AGENTS/glossa\u0301rio.md"), 400, "confusable_path", "path")


@pytest.mark.parametrize(("path", "label"), INVISIBLE)
def test_an_invisible_character_in_a_path_is_a_400_invalid_path(api, project, writer, path, label):
    body = assert_error(create(api(writer), path), 400, "invalid_path", "path")
    assert label in body["characters"]
    assert label in body["detail"]
    assert not Document.objects.exists()


def test_a_control_character_in_a_path_is_an_invalid_path(api, project, writer):
    assert_error(create(api(writer), "notes/a\x1bb.md"), 400, "invalid_path", "path")


@pytest.mark.parametrize("path", ONE_SCRIPT_PER_WORD)
def test_a_path_with_one_script_per_word_is_accepted_and_read_back(
    api, project, writer, reader, path
):
    response = create(api(writer), path, body="# Glossary\n")
    assert response.status_code == 201, response.content
    read = api(reader).get(f"{BASE}/documents/{quote(path)}")
    assert read.status_code == 200 and read.json()["path"] == path


def test_an_outsider_gets_404_whatever_the_path(api, project, outsider, other_tenant):
    for path in (LOOK_ALIKES[0], INVISIBLE[0][0], "agent.md"):
        assert_error(create(api(outsider), path), 404, "not_found")
    assert not Document.objects.exists()


@pytest.fixture
def stored_look_alike(project, admin):
    """A look-alike stored before the check: written straight through the ORM, as an
    older release stored it."""
    body = "# Old\n\nStored before issue 24.\n"
    return Document.objects.create(
        project=project,
        path=".AGENTS/\u043everview.md",
        body=body,
        sha256=sha256_of(body),
        size=len(body.encode()),
        version=1,
        updated_by=admin,
        updated_at=timezone.now(),
    )


def test_a_stored_look_alike_stays_readable_writable_and_removable(
    api, stored_look_alike, writer, reader
):
    url = f"{BASE}/documents/{quote(stored_look_alike.path)}"
    read = api(reader).get(url)
    assert read.status_code == 200 and read.json()["body"].startswith("# Old")
    assert api(reader).get(f"{BASE}/history/{quote(stored_look_alike.path)}").status_code == 200
    written = api(writer).put(url, {"body": "# Renamed soon\n", "version": 1}, format="json")
    assert written.status_code == 200, written.content
    memory = api(reader).post(f"{BASE}/memory-block/", {"process": "p-1"}, format="json")
    assert memory.status_code == 200 and "# Renamed soon" in memory.content.decode()
    exported = api(reader).get(f"{BASE}/export/", {"format": "all"})
    assert exported.status_code == 200
    deleted = api(writer).delete(url, {"version": 2, "reason": "look-alike"}, format="json")
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True


def test_a_stored_look_alike_cannot_be_created_again_once_deleted(api, stored_look_alike, writer):
    url = f"{BASE}/documents/{quote(stored_look_alike.path)}"
    assert api(writer).delete(url, {"version": 1}, format="json").status_code == 200
    assert_error(create(api(writer), stored_look_alike.path), 400, "confusable_path", "path")


# Imports --------------------------------------------------------------------------


def post_import(client, files, *, dry_run=False):
    return client.post(f"{BASE}/import/", {"files": files, "dry_run": dry_run}, format="json")


@pytest.mark.parametrize("dry_run", [True, False])
def test_an_import_refuses_a_cursor_rule_with_an_invisible_name(api, project, writer, dry_run):
    files = [
        {"path": "AGENTS.md", "content": "# Agents\n"},
        {"path": ".cursor/rules/\u202etxt.mdc", "content": "Hidden name.\n"},
    ]
    body = assert_error(
        post_import(api(writer), files, dry_run=dry_run), 400, "invalid_path", "files.1.path"
    )
    assert body["source"] == ".cursor/rules/\u202etxt.mdc"
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in body["characters"]
    assert "Nothing was imported" in body["detail"]
    assert not Document.objects.exists()


def test_an_import_refuses_a_look_alike_rule_name(api, project, writer):
    files = [{"path": ".cursor/rules/\u043everview.mdc", "content": "Second overview.\n"}]
    assert_error(post_import(api(writer), files), 400, "confusable_path", "files.0.path")
    assert not Document.objects.exists()


def test_an_import_takes_a_rule_named_in_one_script(api, project, writer):
    files = [{"path": ".cursor/rules/用語集.mdc", "content": "Terms.\n"}]
    response = post_import(api(writer), files)
    assert response.status_code == 200, response.content
    assert Document.objects.get().path == ".AGENTS/用語集.md"


# Providers ------------------------------------------------------------------------


def test_a_provider_name_or_path_that_looks_alike_is_refused(api, admin, project):
    client = api(admin)
    name = quote("workstation/\u0430gent-baseline")
    response = client.put(PROVIDERS + name, {"project": "web", "path": "a.md"}, format="json")
    assert_error(response, 400, "confusable_path", "name")
    response = client.put(
        PROVIDERS + "workstation/baseline",
        {"project": "web", "path": ".AGENTS/\u043everview.md"},
        format="json",
    )
    assert_error(response, 400, "confusable_path", "path")
    response = client.put(
        PROVIDERS + quote("workstation/base\u200bline"),
        {"project": "web", "path": "a.md"},
        format="json",
    )
    assert_error(response, 400, "invalid_path", "name")
    assert not ProviderMapping.objects.exists()


def test_an_outsider_cannot_map_a_provider(api, outsider, other_tenant, project):
    response = api(outsider).put(
        PROVIDERS + "workstation/baseline", {"project": "web", "path": "a.md"}, format="json"
    )
    assert_error(response, 404, "not_found")


# The rule itself ------------------------------------------------------------------


def test_every_character_find_hidden_reports_is_refused_in_a_name():
    prose_allows = "a\u200cb \U0001f469\u200d\U0001f4bb \u2764\ufe0f"
    assert not find_hidden("\u0648\u200c\u0646")  # ordinary Persian prose ...
    with pytest.raises(InvalidPath):  # ... but not a file name
        validate_name("\u0648\u200c\u0646.md")
    for code_point in [*range(0x200B, 0x2010), *range(0x202A, 0x202F), 0x2066, 0x2069, 0xE0001]:
        assert invisible_in_name(chr(code_point)), hex(code_point)
    assert all(invisible_in_name(c) for c in prose_allows if find_hidden(f"x{c}x"))


def test_the_reserved_folder_s_look_alikes_keep_their_sentence_with_the_new_codes():
    with pytest.raises(ConfusablePath, match="looks like the reserved `_vance`"):
        validate_new_path("_v\u0430nce/x.md")
    with pytest.raises(InvalidPath, match="looks like the reserved `_vance`"):
        validate_new_path("_vance\u200b/x.md")


def test_the_create_page_refuses_a_look_alike_with_the_same_status(client, writer, project):
    client.force_login(writer)
    page = client.post("/t/acme/web/new/", {"path": LOOK_ALIKES[1], "body": "x\n"})
    assert page.status_code == 400
    assert "U+043E CYRILLIC SMALL LETTER O" in page.content.decode()
    hidden = client.post("/t/acme/web/new/", {"path": INVISIBLE[0][0], "body": "x\n"})
    assert hidden.status_code == 400 and "RIGHT-TO-LEFT OVERRIDE" in hidden.content.decode()
    assert not Document.objects.exists()
