"""`agentdocs sync` and `agentdocs sync --check`, run as a subprocess against a live server:
every drift state, the lock file, and the exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdocs.services import documents as document_service
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key

SYNC = ("sync", "--tenant", "acme", "--project", "web", "--format", "agents-md,cursor")


@pytest.fixture
def sources(project, make_document):
    return {
        "agent": make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n"),
        "api": make_document(
            project,
            ".AGENTS/api.md",
            "---\ndescription: API views\nglobs: ['src/api/**']\n---\nThin views.\n",
        ),
    }


@pytest.fixture
def server(live_server, reader, sources):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(reader)}


def sync(repository: Path, server: dict, *extra: str):
    return run_cli(*SYNC, "--dir", str(repository), *extra, cwd=repository, env=server)


def check_lines(result) -> list[str]:
    return result.stdout.decode("utf-8").splitlines()


def test_sync_writes_the_files_and_a_lock_that_matches_the_server(api, reader, server, tmp_path):
    result = sync(tmp_path, server)
    assert result.returncode == 0, result.stderr
    lock = json.loads((tmp_path / "agentdocs.lock.json").read_text())
    # .AGENTS/api.md is scoped to src/api/: Codex reads it as that folder's AGENTS.md.
    assert set(lock["files"]) == {
        "AGENTS.md",
        "src/api/AGENTS.md",
        ".cursor/rules/agentdocs.mdc",
        ".cursor/rules/api.mdc",
    }
    assert (lock["tenant"], lock["project"], lock["format"]) == ("acme", "web", "agents-md,cursor")
    assert "Use tabs." in (tmp_path / "AGENTS.md").read_text()
    single = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md").json()
    assert single["files"][0]["sha256"] == lock["files"]["AGENTS.md"]
    check = sync(tmp_path, server, "--check")
    assert check.returncode == 0 and check_lines(check) == []


def test_one_project_format_gives_the_servers_export_sha256(api, reader, server, tmp_path):
    args = ("sync", "--tenant", "acme", "--project", "web", "--format", "agents-md")
    assert run_cli(*args, "--dir", str(tmp_path), cwd=tmp_path, env=server).returncode == 0
    lock = json.loads((tmp_path / "agentdocs.lock.json").read_text())
    served = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md")
    assert lock["export_sha256"] == served.json()["export_sha256"]


def test_each_drift_state_is_reported_and_exits_1(server, tmp_path, sources, writer):
    assert sync(tmp_path, server).returncode == 0
    # server-changed: the server moved on, the local file is what the last sync wrote.
    document_service.document_write(
        document=sources["agent"],
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        user=writer,
    )
    # edited-locally and missing.
    (tmp_path / ".cursor/rules/agentdocs.mdc").write_text("my own edit\n")
    (tmp_path / ".cursor/rules/api.mdc").unlink()
    result = sync(tmp_path, server, "--check")
    assert result.returncode == 1
    assert check_lines(result) == [
        "edited-locally\t.cursor/rules/agentdocs.mdc",
        "missing\t.cursor/rules/api.mdc",
        "server-changed\tAGENTS.md",
    ]
    # The check changed nothing.
    assert (tmp_path / ".cursor/rules/agentdocs.mdc").read_text() == "my own edit\n"


def test_a_file_no_longer_exported_is_extra_and_the_next_sync_removes_it(
    server, tmp_path, sources, admin
):
    assert sync(tmp_path, server).returncode == 0
    document_service.document_delete(document=sources["api"], base_version=1, user=admin)
    result = sync(tmp_path, server, "--check")
    assert result.returncode == 1
    # AGENTS.md's provenance line said where the scoped document went, so it moved on too.
    assert check_lines(result) == [
        "extra\t.cursor/rules/api.mdc",
        "server-changed\tAGENTS.md",
        "extra\tsrc/api/AGENTS.md",
    ]
    assert sync(tmp_path, server).returncode == 0
    assert not (tmp_path / ".cursor/rules/api.mdc").exists()
    assert not (tmp_path / "src/api/AGENTS.md").exists()
    assert sync(tmp_path, server, "--check").returncode == 0


def test_usage_and_connection_errors_exit_2(server, tmp_path):
    no_lock = sync(tmp_path, server, "--check")
    assert no_lock.returncode == 2 and b"agentdocs.lock.json" in no_lock.stderr
    bad_format = run_cli(
        "sync", "--format", "word", "--dir", str(tmp_path), cwd=tmp_path, env=server
    )
    assert bad_format.returncode == 2
    unreachable = {**server, "AGENTDOCS_URL": "http://127.0.0.1:9"}
    assert sync(tmp_path, unreachable).returncode == 2


# Local edits are never overwritten


LOCAL_EDIT_LINE = (
    "edited-locally {path} (kept; --force to overwrite, or agentdocs propose to send "
    "the edit upstream)"
)


def out_lines(result) -> list[str]:
    return result.stdout.decode("utf-8").splitlines()


def lock_of(repository: Path) -> dict:
    return json.loads((repository / "agentdocs.lock.json").read_text())


def test_a_locally_edited_claude_md_is_kept_the_others_written_and_sync_exits_1(
    server, tmp_path, sources, writer
):
    args = ("--format", "claude-md,cursor")
    assert sync(tmp_path, server, *args).returncode == 0
    written = lock_of(tmp_path)["files"]
    claude = tmp_path / "CLAUDE.md"
    edited = claude.read_text().replace("- Use tabs.", "- Use tabs.\n- Never force-push.")
    claude.write_text(edited)
    document_service.document_write(
        document=sources["agent"],
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        user=writer,
    )

    result = sync(tmp_path, server, *args)

    assert result.returncode == 1, result.stderr
    assert out_lines(result) == [LOCAL_EDIT_LINE.format(path="CLAUDE.md")]
    assert claude.read_text() == edited
    # The other file the server changed was written; the kept one keeps its old entry,
    # so it stays edited-locally until it is overwritten.
    assert "Use spaces." in (tmp_path / ".cursor/rules/agentdocs.mdc").read_text()
    lock = lock_of(tmp_path)
    assert lock["files"]["CLAUDE.md"] == written["CLAUDE.md"]
    assert lock["files"][".cursor/rules/agentdocs.mdc"] != written[".cursor/rules/agentdocs.mdc"]
    check = sync(tmp_path, server, *args, "--check")
    assert check.returncode == 1 and check_lines(check) == ["edited-locally\tCLAUDE.md"]
    # Again: still kept, still exit 1.
    again = sync(tmp_path, server, *args)
    assert again.returncode == 1 and claude.read_text() == edited


def test_force_overwrites_a_local_edit_and_keeps_it_as_orig(server, tmp_path, sources):
    assert sync(tmp_path, server).returncode == 0
    agents = tmp_path / "AGENTS.md"
    exported = agents.read_text()
    agents.write_text("# Mine\n")

    result = sync(tmp_path, server, "--force")

    assert result.returncode == 0, result.stderr
    assert out_lines(result) == ["overwrote AGENTS.md (your version is AGENTS.md.orig)"]
    assert agents.read_text() == exported
    assert (tmp_path / "AGENTS.md.orig").read_text() == "# Mine\n"
    assert sync(tmp_path, server, "--check").returncode == 0


def test_agents_md_rewritten_by_another_tool_is_caught_and_then_kept(server, tmp_path, sources):
    assert sync(tmp_path, server).returncode == 0
    # What ruler does: AGENTS.md rewritten from its own sources, our provenance gone.
    rewritten = "<!-- Generated by Ruler -->\n# Rules\n\n- Use tabs.\n- Run the linter.\n"
    (tmp_path / "AGENTS.md").write_text(rewritten)

    check = sync(tmp_path, server, "--check")
    assert check.returncode == 1 and check_lines(check) == ["edited-locally\tAGENTS.md"]
    result = sync(tmp_path, server)
    assert result.returncode == 1
    assert out_lines(result) == [LOCAL_EDIT_LINE.format(path="AGENTS.md")]
    assert (tmp_path / "AGENTS.md").read_text() == rewritten


NOT_GENERATED_LINE = (
    "not-generated {path} (kept: no agentdocs sync wrote it; --force to overwrite, or "
    "agentdocs import to bring it in)"
)


def test_a_hand_written_file_no_sync_wrote_is_kept_as_not_generated(server, tmp_path, sources):
    (tmp_path / "AGENTS.md").write_text("# Hand-written before agentdocs\n")

    result = sync(tmp_path, server)

    assert result.returncode == 1
    assert out_lines(result) == [NOT_GENERATED_LINE.format(path="AGENTS.md")]
    assert (tmp_path / "AGENTS.md").read_text() == "# Hand-written before agentdocs\n"
    assert "AGENTS.md" not in lock_of(tmp_path)["files"]
    assert (tmp_path / ".cursor/rules/api.mdc").is_file()
    check = sync(tmp_path, server, "--check")
    assert check.returncode == 1 and check_lines(check) == ["not-generated\tAGENTS.md"]
    forced = sync(tmp_path, server, "--force")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "AGENTS.md.orig").read_text() == "# Hand-written before agentdocs\n"
    assert sync(tmp_path, server, "--check").returncode == 0


def test_a_generated_file_no_sync_of_this_lock_wrote_is_edited_locally(server, tmp_path, sources):
    """agentdocs' provenance line says a sync wrote it (another checkout's, or a copy):
    a difference is an edit."""
    other = tmp_path / "other"
    other.mkdir()
    assert sync(other, server).returncode == 0
    here = tmp_path / "here"
    here.mkdir()
    (here / "AGENTS.md").write_text((other / "AGENTS.md").read_text() + "- Mine.\n")

    result = sync(here, server)

    assert result.returncode == 1
    assert out_lines(result) == [LOCAL_EDIT_LINE.format(path="AGENTS.md")]


def test_a_file_that_already_matches_the_export_is_taken_into_the_lock(
    api, reader, server, tmp_path, sources
):
    served = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md").json()
    (tmp_path / "AGENTS.md").write_text(served["files"][0]["content"])
    result = sync(tmp_path, server)
    assert result.returncode == 0, result.stderr
    assert lock_of(tmp_path)["files"]["AGENTS.md"] == served["files"][0]["sha256"]


# Exit codes: 0 in sync, 1 the files, 2 anything else


@pytest.mark.parametrize("check", [False, True], ids=["sync", "check"])
def test_in_sync_is_0_and_drift_is_1(server, tmp_path, sources, writer, check):
    assert sync(tmp_path, server).returncode == 0
    assert sync(tmp_path, server, *(["--check"] if check else [])).returncode == 0
    document_service.document_write(
        document=sources["agent"],
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        user=writer,
    )
    assert sync(tmp_path, server, "--check").returncode == 1
    if not check:
        # A plain sync brings the server's change: nothing was kept, so 0.
        assert sync(tmp_path, server).returncode == 0
        assert sync(tmp_path, server, "--check").returncode == 0


def _token_without_scopes(user) -> str:
    from agentdocs.models import ApiToken

    key = api_token_key(user)
    ApiToken.objects.filter(user=user).update(scopes=[])
    return key


@pytest.mark.parametrize("check", [False, True], ids=["sync", "check"])
@pytest.mark.parametrize(
    "case",
    ["bad token", "no permission", "unknown tenant", "unknown project", "another tenant"],
)
def test_every_server_error_exits_2_with_the_servers_message(
    live_server, reader, outsider, other_tenant, sources, tmp_path, case, check
):
    tokens = {
        "bad token": "not-a-token",
        "no permission": _token_without_scopes(reader),
        "another tenant": api_token_key(outsider),
    }
    tenant, project = {"unknown tenant": ("nope", "web"), "unknown project": ("acme", "nope")}.get(
        case, ("acme", "web")
    )
    messages = {
        "bad token": b"HTTP 401",
        "no permission": b"do not include 'read'",
        "unknown tenant": b"No such tenant.",
        "unknown project": b"No such project",
        "another tenant": b"No such tenant.",
    }
    server = {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": tokens.get(case) or api_token_key(reader),
    }
    if check:  # a check needs a lock file before it asks the server
        (tmp_path / "agentdocs.lock.json").write_text('{"files": {}}\n')
    args = ("sync", "--tenant", tenant, "--project", project, "--format", "agents-md")
    result = run_cli(
        *args, "--dir", str(tmp_path), *(["--check"] if check else []), cwd=tmp_path, env=server
    )
    assert result.returncode == 2, result.stderr
    assert messages[case] in result.stderr, result.stderr
    assert not (tmp_path / "AGENTS.md").exists()


@pytest.mark.parametrize("check", [False, True], ids=["sync", "check"])
def test_no_server_exits_2(server, tmp_path, check):
    if check:
        (tmp_path / "agentdocs.lock.json").write_text('{"files": {}}\n')
    unreachable = {**server, "AGENTDOCS_URL": "http://127.0.0.1:9"}
    result = sync(tmp_path, unreachable, *(["--check"] if check else []))
    assert result.returncode == 2 and b"cannot reach" in result.stderr


def test_force_with_check_is_a_usage_error(server, tmp_path):
    (tmp_path / "agentdocs.lock.json").write_text('{"files": {}}\n')
    result = sync(tmp_path, server, "--check", "--force")
    assert result.returncode == 2 and b"--check changes nothing" in result.stderr


# Warnings: a file over what its tool reads


def test_warnings_are_printed_and_strict_makes_them_exit_1(api, reader, server, tmp_path, sources):
    # Codex reads 32 KiB of AGENTS.md; this one is over 40 KiB.
    big = "# Web rules\n\n" + "".join(f"- Rule {n}: keep it short.\n" for n in range(1800))
    document_service.document_write(
        document=sources["agent"], body=big, base_version=1, user=sources["agent"].updated_by
    )
    served = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md").json()
    [warning] = [w for w in served["warnings"] if w["path"] == "AGENTS.md" and not w["folder"]]
    # From src/api/ (it has its own AGENTS.md) Codex spends the same 32 KiB root first.
    [from_api] = [w for w in served["warnings"] if w["folder"] == "src/api/"]
    path_line = f"warning codex: from src/api/, {from_api['size']:,} of 32,768 bytes: "
    path_line += "AGENTS.md cut at byte 32,768"

    result = sync(tmp_path, server, "--format", "agents-md")

    assert result.returncode == 0, result.stderr
    line = (
        f"warning AGENTS.md: {warning['tool']} reads {warning['limit']} {warning['unit']}, "
        f"this file is {warning['size']} {warning['unit']}"
    )
    assert line.encode() in result.stderr and path_line.encode() in result.stderr
    assert sync(tmp_path, server, "--format", "agents-md", "--check").returncode == 0
    strict = sync(tmp_path, server, "--format", "agents-md", "--check", "--strict")
    assert strict.returncode == 1 and line.encode() in strict.stderr


def test_strict_fails_on_the_codex_cut_from_a_working_folder(server, tmp_path, sources, admin):
    # The root is small; src/api/AGENTS.md alone puts the path over 32 KiB.
    big = "".join(f"- API rule {n}: keep views thin.\n" for n in range(1200))
    document_service.document_write(
        document=sources["api"],
        body=f"---\nglobs: ['src/api/**']\n---\n{big}",
        base_version=1,
        user=admin,
    )
    result = sync(tmp_path, server, "--format", "agents-md")
    assert result.returncode == 0, result.stderr
    root = (tmp_path / "AGENTS.md").stat().st_size
    nested = (tmp_path / "src/api/AGENTS.md").stat().st_size
    line = (
        f"warning codex: from src/api/, {root + nested:,} of 32,768 bytes: "
        f"src/api/AGENTS.md cut at byte {32768 - root:,}"
    )
    assert line in result.stderr.decode()
    assert sync(tmp_path, server, "--format", "agents-md", "--check").returncode == 0
    strict = sync(tmp_path, server, "--format", "agents-md", "--check", "--strict")
    assert strict.returncode == 1 and line in strict.stderr.decode()


def test_check_reads_the_formats_tenant_and_project_from_the_lock_file(server, tmp_path, sources):
    assert sync(tmp_path, server).returncode == 0
    (tmp_path / ".cursor/rules/api.mdc").unlink()

    check = run_cli("sync", "--check", "--dir", str(tmp_path), cwd=tmp_path, env=server)

    assert check.returncode == 1, check.stderr
    assert check_lines(check) == ["missing\t.cursor/rules/api.mdc"]
    again = run_cli("sync", "--dir", str(tmp_path), cwd=tmp_path, env=server)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / ".cursor/rules/api.mdc").is_file()
    assert lock_of(tmp_path)["format"] == "agents-md,cursor"


def test_without_a_lock_file_format_is_required(server, tmp_path):
    result = run_cli(
        "sync",
        "--tenant",
        "acme",
        "--project",
        "web",
        "--dir",
        str(tmp_path),
        cwd=tmp_path,
        env=server,
    )
    assert result.returncode == 2
    assert "--format is required" in result.stderr.decode()
    assert not (tmp_path / "agentdocs.lock.json").exists()


def test_a_sync_that_changes_nothing_says_the_lock_file_is_unchanged(server, tmp_path, sources):
    first = sync(tmp_path, server)
    assert "wrote 4 file(s) and agentdocs.lock.json" in first.stderr.decode()
    lock = tmp_path / "agentdocs.lock.json"
    lock.touch()
    before = lock.stat().st_mtime_ns
    os.utime(lock, ns=(before - 10**9, before - 10**9))

    again = sync(tmp_path, server)

    assert again.returncode == 0
    assert "wrote 0 file(s) (agentdocs.lock.json unchanged)" in again.stderr.decode()
    assert lock.stat().st_mtime_ns == before - 10**9
