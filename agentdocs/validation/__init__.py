"""Checks of the values a write takes, shared by every face that takes them (the API's
serializers, the pages' forms, the MCP tools, the CLI's server side) and run again by
the write itself: each rule of a value lives once, here, in the module named after its
concept (`documents`, `document_locks`, `memory_block`, `skills`, `tokens`).

A check reads and writes nothing and raises `agentdocs.core.errors.InvalidInput` (or
the refusal it names) with the field. What a check needs to know of the database is
handed to it (whether the tenant allows an override, `selectors.policy.overrides`), so
selectors may check too: an import's plan is a read that checks what it would write.
"""
