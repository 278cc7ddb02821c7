"""The MCP server of one project, without Django: what `agentdocs mcp` (stdio) and the
web app's `/mcp/` serve alike."""
