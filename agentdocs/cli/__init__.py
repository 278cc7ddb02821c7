"""The `agentdocs` command-line client: `base` holds what the commands share,
one module per command group registers its commands, `main` parses and runs."""

from agentdocs.cli.main import main

__all__ = ["main"]
