"""The values a render takes, checked once for every face (`agentdocs.validation.memory_block`)."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import InvalidInput, SecretDetected
from agentdocs.core.memory_block import ClientDocument
from agentdocs.core.scope import MAX_PATHS
from agentdocs.validation import memory_block as checks


def test_process_ids_found_valid_are_remembered_boundedly_and_bad_ones_never(monkeypatch):
    """`validate_process` remembers the ids it found valid (a render checked each twice),
    within a bound; an id with a secret or a control character is refused every time."""
    monkeypatch.setattr(checks, "_VALID_PROCESSES", {})
    monkeypatch.setattr(checks, "VALID_PROCESSES_MAX", 3)
    for n in range(5):
        assert checks.validate_process(f"agent-{n}") == f"agent-{n}"
        assert checks.validate_process(f"agent-{n}") == f"agent-{n}"
        assert len(checks._VALID_PROCESSES) <= 3
    assert "agent-4" in checks._VALID_PROCESSES
    for _ in range(2):
        with pytest.raises(SecretDetected):
            checks.validate_process("agent AKIAQ7RS2T9VWXY3Z4AB")
        with pytest.raises(InvalidInput):
            checks.validate_process("agent\nline")
        with pytest.raises(InvalidInput):
            checks.validate_process("   ")
    assert set(checks._VALID_PROCESSES) <= {f"agent-{n}" for n in range(5)}


def test_paths_come_back_sorted_without_duplicates_and_bad_ones_name_the_field():
    assert checks.validate_paths(None) == ()
    assert checks.validate_paths(["src/b.py", "src/a.py", "src/b.py"]) == ("src/a.py", "src/b.py")
    for bad in ["src/a.py", ["../etc/passwd"], ["/abs/path"], ["x"] * (MAX_PATHS + 1)]:
        with pytest.raises(InvalidInput) as error:
            checks.validate_paths(bad)
        assert error.value.field == "paths"


def test_a_client_document_is_one_named_line_and_at_most_256_kib():
    assert checks.validate_client_document(name="CLAUDE.md", body="# Hi\n") == ClientDocument(
        name="CLAUDE.md", body="# Hi\n"
    )
    at_limit = "é" * (checks.MAX_CLIENT_DOCUMENT_BYTES // 2)
    assert checks.validate_client_document(name="CLAUDE.md", body=at_limit).body == at_limit
    refused = [
        ({"name": "", "body": "x"}, "client_document.name"),
        ({"name": "two\nlines", "body": "x"}, "client_document.name"),
        ({"name": "n" * (checks.MAX_CLIENT_NAME_LENGTH + 1), "body": "x"}, "client_document.name"),
        ({"name": "CLAUDE.md", "body": at_limit + "x"}, "client_document.body"),
        ({"name": "CLAUDE.md", "body": "\ud800"}, "client_document.body"),
    ]
    for given, field in refused:
        with pytest.raises(InvalidInput) as error:
            checks.validate_client_document(**given)
        assert error.value.field == field
