"""Reads that cross relations, split by domain like the models: `tenancy`,
`documents`, `policy`, `bindings`, `tokens`. Callers have already resolved access
through `agentdocs.permissions`, so these take the project or tenant it returned."""
