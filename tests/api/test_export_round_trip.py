"""Every format's files round-trip through import: exported, then imported, each file
maps back to the document it came from, and a rule file of one document is
`unchanged` (the same rules, however its tool writes them)."""

from __future__ import annotations

import re

import pytest

from agentdocs.core.targets import FORMATS
from tests.export_projects import BASE, DOCUMENTS, export

pytestmark = pytest.mark.django_db

SOURCE = re.compile(r"web/(\.AGENTS/[^@]+)@v\d+ ")
NOTES_SOURCE = "_vance/agent.md@v"


@pytest.mark.parametrize("format", FORMATS)
def test_every_file_maps_back_to_the_documents_it_came_from(api, writer, documents, format):
    client = api(writer)
    files = export(client, format)["files"]
    response = client.post(
        f"{BASE}/import/",
        {"files": [{"path": f["path"], "content": f["content"]} for f in files], "dry_run": True},
        format="json",
    )
    assert response.status_code == 200, response.content
    rows: dict[str, list[dict]] = {}
    for row in response.json()["plan"]:
        rows.setdefault(row["source"], []).append(row)
    assert list(rows) == [f["path"] for f in files]
    carried: set[str] = set()
    for file in files:
        # A generated file is read back section by section (`import_round_trip`): each
        # section maps to the document it came from, and nothing changed, so nothing is
        # written and nothing proposed.
        named = set(SOURCE.findall(file["content"]))
        if NOTES_SOURCE in file["content"]:
            named.add("agent.md")
        plan = rows[file["path"]]
        assert {row["action"] for row in plan} == {"unchanged"}, plan
        assert {row["target"] for row in plan} == named, plan
        carried.update(named)
    # Nothing is lost on the way: every document is in one of the files.
    assert carried == {*DOCUMENTS, "agent.md"}
