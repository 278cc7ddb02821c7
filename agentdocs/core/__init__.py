"""The pure core: plain Python over plain data, no Django, no database.

- `cascade`: the agent document cascade (project, tenant `_vance`, bundled default).
- `context`: the `.AGENTS/` loader, over data or a local folder.
- `policy`: merging `memory.*` settings; `recipes`: what a recipe and profile mean.
- `memory_block`: composing the block, its account and the per-process dedup.
- `manifest`, `classification`, `bindings`: binding records (the manifest, the
  exception classification, canonical JSON, comparing records).
- `diffs`, `secret_scan`, `paths`, `numbers`, `errors`: the helpers all floors share.

The database reads happen before, in `agentdocs.selectors` and `agentdocs.services`;
the command-line client uses the core directly.
"""
