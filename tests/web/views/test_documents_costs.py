"""A document page says what the document costs per process and per day, in bytes and
tokens, with the one-screen goal beside it."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest

from agentdocs.core.token_count import count_tokens
from tests.api.test_costs import AGENT_STUB, block, delivered

pytestmark = pytest.mark.django_db

BODY = "# Web rules\n\n- Use tabs.\n"
# What a process's first turn carries of it: its layer, heading included.
LAYER = "## Agent Notes (agent.md)\n\n" + BODY.rstrip()


def test_the_page_says_the_cost_per_process_and_per_day_beside_the_goal(
    browse, reader, project, agent_md
):
    delivered(project, "p1", block(LAYER), ago=timedelta(hours=2))
    delivered(project, "p1", block(AGENT_STUB), ago=timedelta(hours=1))
    page = html.unescape(browse(reader).get("/t/acme/web/doc/agent.md").content.decode())
    tokens = count_tokens(LAYER)
    size = len(LAYER.encode())
    assert f"{tokens} tokens · {size} bytes, sent in full on a process's first turn" in page
    per_day = round((tokens + count_tokens(AGENT_STUB)) / 30, 1)
    assert f"{per_day} tokens, over the last 30 days (2 turns delivered)" in page
    assert "one screen: 60 lines · 4.0\xa0KB" in page


def test_a_document_outside_the_block_says_so(browse, reader, project, make_document):
    make_document(project, "docs/notes.md", "Notes.\n")
    page = browse(reader).get("/t/acme/web/doc/docs/notes.md").content.decode()
    assert "not in the Memory Block without a recipe" in page
    assert "0.0 tokens, over the last 30 days (0 turns" in page
