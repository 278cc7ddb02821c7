"""A client that never blocks an agent: the last good Memory Block kept on disk.

`agentdocs.client.cache` keeps, per server and (tenant, project, recipe, profile,
label), the last full block the server previewed, and the binding records of the
runs served from it until they are uploaded; `agentdocs.client.blocks` renders a
turn through the REST API and serves the cached block when the server cannot be
reached, times out or answers 5xx; `agentdocs.client.http` is every command's HTTP (the
standard library: a hook's start does not pay for `requests`). Used by `agentdocs block`,
`agentdocs mcp` and `agentdocs hook context`.
No Django here.
"""
