"""Skills into repositories (issue 37): every tool that reads skills gets each offered
skill in the folder it documents, byte for byte, and the Agent Skills reference
validator (`skills-ref`, tests/skills_ref) accepts every one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentdocs.core.export import build_export
from agentdocs.core.memory_block import MemoryBlockInputs
from agentdocs.core.skill_export import ExportedSkill
from agentdocs.core.targets import TARGETS
from agentdocs.services import policy as policy_service
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from tests.export_projects import BASE, export
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
SKILLS_REF = REPO / "tests" / "skills_ref" / "node_modules" / ".bin" / "skills-ref"
SCRIPT = "#!/bin/sh\r\necho 'übergabe'\t→ done"
HANDOFF = {
    "SKILL.md": skill_md("handoff"),
    "scripts/run.sh": SCRIPT,
    "references/deep/notes.md": "# Notes\n",
}
REVIEW = {
    "SKILL.md": "---\nname: review\ndescription: Review a change.\nlicense: MIT\n"
    'metadata:\n  version: "1.0"\n---\n# Review\n'
}


@pytest.fixture
def skills(project, vance, admin, documents):
    skill_service.skill_create(project=project, name="handoff", files=HANDOFF, user=admin)
    skill_service.skill_create(project=vance, name="review", files=REVIEW, user=admin)


def files_of(data) -> dict[str, str]:
    return {file["path"]: file["content"] for file in data["files"]}


def test_each_tool_that_reads_skills_gets_them_in_its_folder(api, reader, skills):
    client = api(reader)
    for entry in TARGETS:
        files = files_of(export(client, entry.format))
        skill_paths = {path for path in files if "/skills/" in path}
        if entry.skills is None:
            assert skill_paths == set(), entry.format
            continue
        folder = entry.skills.dir
        assert skill_paths == {
            f"{folder}handoff/SKILL.md",
            f"{folder}handoff/scripts/run.sh",
            f"{folder}handoff/references/deep/notes.md",
            f"{folder}review/SKILL.md",
        }, entry.format
        # Byte for byte: CRLF, tabs, non-ASCII, no final newline; no provenance line.
        assert files[f"{folder}handoff/scripts/run.sh"] == SCRIPT
        assert files[f"{folder}handoff/SKILL.md"] == HANDOFF["SKILL.md"]
        assert files[f"{folder}review/SKILL.md"] == REVIEW["SKILL.md"]


def test_the_folders_are_the_ones_each_tool_documents():
    folders = {entry.format: entry.skills.dir for entry in TARGETS if entry.skills}
    assert folders["claude-md"] == ".claude/skills/"
    assert folders["agents-md"] == ".agents/skills/"  # Codex
    assert folders["gemini-md"] == ".gemini/skills/"
    assert folders["cursor"] == ".cursor/skills/"
    assert folders["copilot"] == ".github/skills/"
    assert all(entry.skills.source.startswith("https://") for entry in TARGETS if entry.skills)


def test_all_writes_a_shared_folder_once_and_is_deterministic(api, reader, skills):
    client = api(reader)
    first = export(client, "all")
    paths = [file["path"] for file in first["files"]]
    assert len(paths) == len(set(paths))
    assert ".agents/skills/handoff/SKILL.md" in paths  # Codex, Antigravity, Zed, goose
    assert export(client, "all")["export_sha256"] == first["export_sha256"]
    zipped = client.get(f"{BASE}/export/", {"format": "all"}, HTTP_ACCEPT="application/zip")
    again = client.get(f"{BASE}/export/", {"format": "all"}, HTTP_ACCEPT="application/zip")
    assert zipped.content == again.content


def test_the_recipe_chooses_which_skills_are_exported(api, reader, tenant, admin, skills):
    for name, chosen in (("none", []), ("only-review", ["review"])):
        policy_service.recipe_create(
            tenant=tenant, name=name, params={"skills": chosen}, profiles={}, user=admin
        )
    client = api(reader)

    def skill_paths(recipe: str) -> list[str]:
        files = files_of(export(client, "claude-md", recipe=recipe))
        return [path for path in files if "skills/" in path]

    assert skill_paths("none") == []
    assert skill_paths("only-review") == [".claude/skills/review/SKILL.md"]


def test_without_skills_the_export_is_what_it_was(api, reader, documents):
    data = export(api(reader), "all")
    assert not [file for file in data["files"] if "/skills/" in file["path"]]


@pytest.mark.parametrize("count", [1, 20])
def test_an_export_reads_the_same_queries_however_many_skills_and_files(
    api, reader, project, admin, documents, settings, count, django_assert_max_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False
    for n in range(count):
        files = {"SKILL.md": skill_md(f"skill-{n:02}")}
        files.update({f"references/r{k}.md": f"{n}.{k}\n" for k in range(count)})
        skill_service.skill_create(project=project, name=f"skill-{n:02}", files=files, user=admin)
    client = api(reader)
    with django_assert_max_num_queries(5):
        data = export(client, "claude-md")
    assert len([f for f in data["files"] if "/skills/" in f["path"]]) == count * (count + 1)


def test_build_export_is_pure_and_orders_skills_by_name():
    inputs = MemoryBlockInputs()
    skills = [
        ExportedSkill("zeta", "web", 1, "z", {"SKILL.md": skill_md("zeta")}),
        ExportedSkill("alpha", "web", 1, "a", {"SKILL.md": skill_md("alpha"), "assets/t.txt": "t"}),
    ]
    built = build_export(inputs, tenant="acme", project="web", format="kiro", skills=skills)
    assert [file.path for file in built.files if "skills/" in file.path] == [
        ".kiro/skills/alpha/SKILL.md",
        ".kiro/skills/alpha/assets/t.txt",
        ".kiro/skills/zeta/SKILL.md",
    ]
    again = build_export(inputs, tenant="acme", project="web", format="kiro", skills=skills[::-1])
    assert again.export_sha256 == built.export_sha256


def _skills_ref_missing() -> str | None:
    if shutil.which("node") is None:
        return "Node.js is not installed (skills-ref runs on it)"
    if not SKILLS_REF.exists():
        return "skills-ref is not installed: run `npm ci` in tests/skills_ref"
    return None


def test_the_reference_validator_accepts_every_exported_skill(api, reader, skills, tmp_path):
    missing = _skills_ref_missing()
    if missing is not None:
        if os.environ.get("AGENTDOCS_REQUIRE_SERVICES"):
            pytest.fail(missing)
        pytest.skip(missing)
    for path, content in files_of(export(api(reader), "all")).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))
    folders = sorted(
        {
            tmp_path / entry.skills.dir / name
            for entry in TARGETS
            if entry.skills
            for name in ("handoff", "review")
        }
    )
    assert len(folders) == 2 * len({entry.skills.dir for entry in TARGETS if entry.skills})
    for folder in folders:
        done = subprocess.run(
            [str(SKILLS_REF), "validate", str(folder)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (folder, done.stdout, done.stderr)
        assert "Valid skill" in done.stdout


def test_a_recipe_reading_by_a_label_exports_the_labelled_version(
    api, reader, tenant, project, admin, documents, settings, django_assert_max_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False
    skill = skill_service.skill_create(
        project=project, name="handoff", files=HANDOFF, user=admin
    ).skill
    skill_label_service.skill_label_move(skill=skill, name="production", version=1, user=admin)
    newer = {**HANDOFF, "SKILL.md": skill_md("handoff", "The canary text.")}
    skill_service.skill_write(skill=skill, files=newer, base_version=1, user=admin)
    policy_service.recipe_create(
        tenant=tenant, name="stable", params={"label": "production"}, profiles={}, user=admin
    )
    client = api(reader)
    latest = files_of(export(client, "claude-md"))
    assert latest[".claude/skills/handoff/SKILL.md"] == newer["SKILL.md"]
    with django_assert_max_num_queries(6):
        stable = files_of(export(client, "claude-md", recipe="stable"))
    assert stable[".claude/skills/handoff/SKILL.md"] == HANDOFF["SKILL.md"]
    assert stable[".claude/skills/handoff/scripts/run.sh"] == SCRIPT
