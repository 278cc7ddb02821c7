"""Checks of the values a write takes, shared by every face that takes them (the API's
serializers, the pages' forms, the MCP tools, the CLI's server side) and run again by
the write itself: each rule of a value lives once, here, in the module named after its
concept (`documents`, `document_locks`, `memory_block`, `skills`, `tokens`).

A check writes nothing and raises `agentdocs.core.errors.InvalidInput` (or the
refusal it names) with the field; it reads at most the tenant's policy, through the
selectors. Nothing here imports a service or a face.
"""
