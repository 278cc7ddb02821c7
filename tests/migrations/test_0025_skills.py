"""Migration 0025 gives the skills' history table the (chain_tenant, chain_seq) index
every history table has, which the audit chain's walk and export read by."""

from __future__ import annotations

from django.db import connection

from agentdocs.models import Skill


def test_the_skill_history_table_has_the_chain_index(db):
    table = Skill.history.model._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    chain = constraints.get("agentdocs_historicalskill_chain")
    assert chain is not None and chain["index"], sorted(constraints)
    assert chain["columns"] == ["chain_tenant", "chain_seq"]
