"""Every format's files round-trip through import: exported, then imported, each file
maps back to the document it came from, and a rule file of one document is
`unchanged` (the same rules, however its tool writes them)."""

from __future__ import annotations

import re

import pytest

from agentdocs.core import targets
from agentdocs.core.targets import FORMATS

from .conftest import BASE, DOCUMENTS, export

pytestmark = pytest.mark.django_db

SOURCE = re.compile(r"web/(\.AGENTS/[^@]+)@v\d+ ")


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
    plan = {row["source"]: row for row in response.json()["plan"]}
    assert list(plan) == [f["path"] for f in files]
    entry = targets.target(format)
    carried: set[str] = set()
    for file in files:
        row = plan[file["path"]]
        if file["path"] == entry.main:
            if entry.main_is_a_rule:
                # agentdocs' own policy and notes, from agent.md: not copied again.
                assert row["action"] == "skipped", row
            else:
                assert row["target"] == "agent.md", row
            carried.update(SOURCE.findall(file["content"]))
            continue
        [source] = SOURCE.findall(file["content"])
        assert (row["target"], row["action"]) == (source, "unchanged"), row
        carried.add(source)
    # Nothing is lost on the way: every document is in one of the files.
    assert carried == set(DOCUMENTS)
