"""A skill's stale save merged (three-way, file by file) or refused with the documents'
409 `merge_conflict`, and a skill's edit lock, as documents have them (issue 37)."""

from __future__ import annotations

import pytest

from agentdocs.core.skill_merge import merge_bundles
from agentdocs.models import Skill
from agentdocs.services import skills as skill_service
from tests.api.test_documents import assert_error
from tests.skill_bundles import skill_md, skill_url

pytestmark = pytest.mark.django_db

GUIDE = "one\ntwo\nthree\nfour\nfive\n"


@pytest.fixture
def handoff(project, writer):
    """`handoff` at version 1: SKILL.md, a script and a guide of five lines."""
    files = {
        "SKILL.md": skill_md("handoff"),
        "scripts/run.sh": "#!/bin/sh\necho handoff\n",
        "references/guide.md": GUIDE,
    }
    return skill_service.skill_create(project=project, name="handoff", files=files, user=writer)


def _theirs(skill: Skill, user, **changes: str | None) -> Skill:
    files = dict(skill.files)
    for path, text in changes.items():
        path = path.replace("__", "/").replace("_md", ".md").replace("_sh", ".sh")
        if text is None:
            files.pop(path)
        else:
            files[path] = text
    return skill_service.skill_write(
        skill=skill, files=files, base_version=skill.version, user=user, reason="theirs"
    ).skill


def _put(client, files, *, version=1, merge=True, query=""):
    body = {"files": files, "version": version, "reason": "mine"}
    if merge is not None:
        body["merge"] = merge
    return client.put(skill_url("handoff") + query, body, format="json")


def test_a_stale_save_is_merged_file_by_file_onto_the_current_version(api, handoff, writer, admin):
    base = dict(handoff.skill.files)
    # Theirs (version 2): the guide's first line, and a new reference.
    theirs = dict(base, **{"references/guide.md": "ONE\ntwo\nthree\nfour\nfive\n"})
    theirs["references/new.md"] = "theirs\n"
    skill_service.skill_write(skill=handoff.skill, files=theirs, base_version=1, user=admin)
    # Mine (based on version 1): the guide's last line, the script, and no new file.
    mine = dict(base, **{"references/guide.md": "one\ntwo\nthree\nfour\nFIVE\n"})
    mine["scripts/run.sh"] = "#!/bin/sh\necho mine\n"
    stale = _put(api(writer), mine, merge=False)
    assert_error(stale, 412, "version_conflict")
    merged = _put(api(writer), mine)
    assert merged.status_code == 200, merged.content
    body = merged.json()
    assert (body["version"], body["merged_with"]) == (3, 2)
    files = {f["path"]: f["content"] for f in body["files"]}
    assert files["references/guide.md"] == "ONE\ntwo\nthree\nfour\nFIVE\n"
    assert files["scripts/run.sh"] == "#!/bin/sh\necho mine\n"
    assert files["references/new.md"] == "theirs\n"
    row = Skill.history.filter(version=3).get()
    assert (row.history_user.username, row.history_change_reason) == ("bob", "mine")
    # `?merge=1` asks the same.
    again = dict(mine, **{"references/other.md": "x\n"})
    assert _put(api(writer), again, merge=None, query="?merge=1").json()["version"] == 4
    # The next plain write records no merge.
    current = Skill.objects.get()
    plain = _put(api(writer), dict(current.files, **{"references/y.md": "y\n"}), version=4)
    assert plain.json()["merged_with"] is None


def test_overlapping_edits_are_409_with_the_conflicts_and_nothing_is_written(
    api, handoff, writer, admin
):
    skill = _theirs(handoff.skill, admin, references__guide_md="one\nTWO!\nthree\nfour\nfive\n")
    mine = dict(handoff.skill.files, **{"references/guide.md": "one\nTWO?\nthree\nfour\nfive\n"})
    body = assert_error(_put(api(writer), mine), 409, "merge_conflict", "files/references/guide.md")
    assert (body["base_version"], body["current_version"]) == (1, 2)
    (conflict,) = body["conflicts"]
    assert conflict["path"] == "references/guide.md"
    assert conflict["base"] == {"start": 2, "lines": ["two"]}
    assert conflict["theirs"] == {"start": 2, "lines": ["TWO!"]}
    assert conflict["yours"] == {"start": 2, "lines": ["TWO?"]}
    assert Skill.objects.get().version == skill.version == 2


def test_a_file_removed_on_one_side_and_edited_on_the_other_is_a_conflict(
    api, handoff, writer, admin
):
    _theirs(handoff.skill, admin, scripts__run_sh=None)
    mine = dict(handoff.skill.files, **{"scripts/run.sh": "#!/bin/sh\necho edited\n"})
    body = assert_error(_put(api(writer), mine), 409, "merge_conflict", "files/scripts/run.sh")
    (conflict,) = body["conflicts"]
    assert conflict["theirs"]["lines"] == []
    assert conflict["yours"]["lines"] == ["#!/bin/sh", "echo edited"]
    assert Skill.objects.get().version == 2


def test_a_merged_bundle_is_checked_as_any_write(api, handoff, writer, admin):
    _theirs(handoff.skill, admin, references__a_md="a\n")
    # Mine breaks SKILL.md's frontmatter: the merge keeps it, the check refuses it.
    mine = dict(handoff.skill.files, **{"SKILL.md": "no frontmatter\n"})
    assert _put(api(writer), mine).status_code == 422
    assert Skill.objects.get().version == 2


def test_merge_bundles_is_plain_data():
    base = {"SKILL.md": "s\n", "a.md": "1\n2\n3\n"}
    made = merge_bundles(
        base,
        {"SKILL.md": "s\n", "a.md": "X\n2\n3\n", "t.md": "t\n"},
        {"SKILL.md": "S\n", "a.md": "1\n2\nY\n"},
    )
    assert made.clean and made.merged_paths == ["a.md"]
    assert made.files == {"SKILL.md": "S\n", "a.md": "X\n2\nY\n", "t.md": "t\n"}
    both_added = merge_bundles({}, {"n.md": "a\n"}, {"n.md": "b\n"})
    assert [c["path"] for c in both_added.conflicts] == ["n.md"]
    removed_alike = merge_bundles(base, {"SKILL.md": "s\n"}, {"SKILL.md": "s\n"})
    assert removed_alike.files == {"SKILL.md": "s\n"}


# Locks.


def _lock(client, method="post", **body):
    return getattr(client, method)(skill_url("handoff", rest="/lock"), body, format="json")


def test_a_lock_refuses_others_writes_until_released_or_broken(api, handoff, writer, admin):
    taken = _lock(api(writer), ttl_seconds=60)
    assert taken.status_code == 200, taken.content
    assert taken.json()["name"] == "handoff"
    assert taken.json()["lock"]["holder"] == "bob"
    assert api(writer).get(skill_url("handoff")).json()["lock"]["holder"] == "bob"
    files = dict(handoff.skill.files, **{"references/x.md": "x\n"})
    body = assert_error(_put(api(admin), files, merge=False), 423, "locked", "name")
    assert body["lock"]["holder"] == "bob"
    assert_error(
        api(admin).delete(skill_url("handoff"), {"version": 1}, format="json"), 423, "locked"
    )
    revert = api(admin).post(skill_url("handoff", rest="/revert"), {"version": 1}, format="json")
    assert revert.status_code == 423
    assert_error(_lock(api(admin)), 423, "locked")
    # The holder writes; taking the lock wrote no version.
    assert _put(api(writer), files, merge=False).json()["version"] == 2
    assert Skill.history.count() == 2
    assert _lock(api(writer), "delete").json()["lock"] is None
    assert _put(api(admin), dict(files, **{"references/y.md": "y\n"}), version=2).status_code == 200


def test_only_a_tenant_admin_breaks_anothers_lock(api, handoff, writer, admin, reader):
    _lock(api(admin))
    assert_error(_lock(api(writer), force=True), 403, "forbidden")
    assert_error(_lock(api(writer), "delete"), 423, "locked")
    assert_error(_lock(api(reader)), 403, "forbidden")
    _lock(api(admin), "delete")
    _lock(api(writer))
    broken = _lock(api(admin), force=True)
    assert broken.json()["lock"]["holder"] == "alice"
    assert _lock(api(admin), "delete", force=False).json()["lock"] is None


def test_a_lock_ttl_outside_its_bounds_is_400_naming_it(api, handoff, writer, settings):
    assert_error(_lock(api(writer), ttl_seconds=0), 400, "invalid", "ttl_seconds")
    too_long = settings.AGENTDOCS_LOCK_MAX_TTL_SECONDS + 1
    assert_error(_lock(api(writer), ttl_seconds=too_long), 400, "invalid", "ttl_seconds")
    assert Skill.objects.get().lock_holder is None
