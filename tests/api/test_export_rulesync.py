"""rulesync (https://github.com/dyoshikawa/rulesync), a third-party tool that reads
about fifty agent tools' rule files, reads our export of every target it supports:
`rulesync import --targets T --features rules` takes each of our files as the rule it
is, with its scope.

rulesync 17 needs Node.js 22. The test runs it as `RULESYNC_BIN` says (a command line,
such as `/path/to/node /path/to/rulesync/dist/cli/index.js`), or `rulesync` on PATH;
without either it is skipped, saying so (`.ci/run` installs it for CI).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import frontmatter
import pytest

from agentdocs.core.targets import TARGETS
from tests.export_projects import export

pytestmark = pytest.mark.django_db

# Our format -> rulesync's target reading the same files. rulesync 17 has no Windsurf
# target (its `devin` one reads AGENTS.md and `.devin/rules/`: our `devin`), and no Gemini
# CLI one since Antigravity took over.
RULESYNC_TARGETS = {
    "agents-md": "agentsmd",
    "claude-md": "claudecode",
    "copilot": "copilot",
    "cursor": "cursor",
    "antigravity": "antigravity-ide",
    "kiro": "kiro",
    "cline": "cline",
    "continue": "continue",
    "junie": "junie",
    "zed": "zed",
    "roo": "roo",
    "augment": "augmentcode",
    "qwen": "qwencode",
    "goose": "goose",
    "devin": "devin",
    "codebuddy": "codebuddy",
    "aiassistant": "aiassistant",
    "hermes": "hermesagent",
    "kimi-code": "kimi-code",
    "reasonix": "reasonix",
    "replit": "replit",
    "tabnine": "tabnine",
    "takt": "takt",
}
# rulesync's other targets that read exactly one of our formats' files: the tools the
# registry's `READ_BY` says a format serves (amp, ...: AGENTS.md), and rulesync's second
# target for a tool we have (codexcli, kiro-ide, ...).
RULESYNC_ALSO = {
    "codexcli": "agents-md",
    "amp": "agents-md",
    "bob": "agents-md",
    "commandcode": "agents-md",
    "cortexcode": "agents-md",
    "factorydroid": "agents-md",
    "grokcli": "agents-md",
    "kilo": "agents-md",
    "musecode": "agents-md",
    "opencode": "agents-md",
    "pi": "agents-md",
    "pool": "agents-md",
    "rovodev": "agents-md",
    "vibe": "agents-md",
    "warp": "agents-md",
    "zcode": "agents-md",
    "dsh": "agents-md",
    "copilotcli": "copilot",
    "antigravity-cli": "antigravity",
    "kiro-cli": "kiro",
    "kiro-ide": "kiro",
    "zoocode": "roo",
    "augmentcode-legacy": "augment",
}
# The documents each of those exports as rules of their own, with the globs rulesync
# should read from each (None: the tool has no globs to say).
SCOPED_RULES = {
    "claude-md": {"api": ["src/api/**", "**/*.sql"]},
    "copilot": {"api": ["src/api/**", "**/*.sql"], "review": None, "legacy": None},
    "cursor": {"overview": None, "api": ["src/api/**", "**/*.sql"], "review": None,
               "legacy": None},
    # antigravity: none (Codex's AGENTS.md holds them all, and Antigravity reads it).
    "kiro": {"overview": None, "api": ["src/api/**", "**/*.sql"], "review": None,
             "legacy": None},
    "cline": {"overview": None, "api": ["src/api/**", "**/*.sql"]},
    "continue": {"overview": None, "api": ["src/api/**", "**/*.sql"], "review": None,
                 "legacy": None},
    "augment": {"overview": None, "review": None, "legacy": None},
    "codebuddy": {"api": ["src/api/**", "**/*.sql"]},
    "qwen": {"api": ["src/api/**", "**/*.sql"]},
    "aiassistant": {"overview": None, "api": ["src/api/**", "**/*.sql"], "review": None,
                    "legacy": None},
}  # fmt: skip
# The targets that read none of our files: `antigravity-plugin` reads a plugin
# package's `rules/` folder; `claudecode-legacy` rulesync's own old `.claude/memories/`,
# which Claude Code reads only where CLAUDE.md imports them (our `claude-md` writes
# `.claude/rules/`, which it reads itself); `crush` and `deepagents` only CRUSH.md and
# `.deepagents/AGENTS.md`, which we do not write: Crush and Deep Agents Code read the
# root AGENTS.md beside them, together, so `agents-md` serves them (a file of their own
# would give them every rule twice).
RULESYNC_NONE = ("antigravity-plugin", "claudecode-legacy", "crush", "deepagents")
# rulesync's `antigravity-cli` reads `.agents/rules/` as plain rules (Antigravity CLI
# lists them from AGENTS.md), not their `trigger` and `globs`.
RULESYNC_NO_GLOBS = ("antigravity-cli",)
# rulesync 17's targets for `--features rules` (`rulesync import --help`).
RULESYNC_17_TARGETS = (
    "agentsmd", "aiassistant", "amp", "antigravity-cli", "antigravity-ide",
    "antigravity-plugin", "augmentcode", "augmentcode-legacy", "bob", "claudecode",
    "claudecode-legacy", "cline", "codebuddy", "codexcli", "commandcode", "continue", "copilot",
    "copilotcli", "cortexcode", "crush", "cursor", "deepagents", "factorydroid", "goose",
    "grokcli", "hermesagent", "junie", "kilo", "kimi-code", "kiro", "kiro-cli", "kiro-ide",
    "musecode", "opencode", "pi", "pool", "qwencode", "reasonix", "replit", "roo", "rovodev",
    "tabnine", "takt", "vibe", "warp", "devin", "zcode", "zed", "zoocode", "dsh",
)  # fmt: skip
TEXTS = {
    "overview": "What this project is.",
    "api": "One APIView per operation.",
    "review": "Read the tests first.",
    "legacy": "The old importer, by hand.",
}


def rulesync_import(command: list[str], folder: Path, target: str) -> dict[str, frontmatter.Post]:
    """rulesync's rules after importing ``folder`` from ``target``, by file name."""
    result = subprocess.run(
        [*command, "import", "--targets", target, "--features", "rules"],
        cwd=folder,
        capture_output=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, (result.stdout + result.stderr).decode()
    rules = folder / ".rulesync" / "rules"
    assert rules.is_dir(), (result.stdout + result.stderr).decode()
    return {path.name: frontmatter.load(path) for path in sorted(rules.glob("*.md"))}


@pytest.mark.parametrize("format", sorted(RULESYNC_TARGETS))
def test_rulesync_reads_our_export(api, reader, documents, rulesync, tmp_path, format):
    check_rulesync_reads(api(reader), rulesync, tmp_path, format, RULESYNC_TARGETS[format])


@pytest.mark.parametrize("target", sorted(RULESYNC_ALSO))
def test_rulesync_reads_the_format_that_serves_its_target(
    api, reader, documents, rulesync, tmp_path, target
):
    format = RULESYNC_ALSO[target]
    check_rulesync_reads(
        api(reader), rulesync, tmp_path, format, target, globs=target not in RULESYNC_NO_GLOBS
    )


def test_every_rulesync_target_reads_one_of_our_formats():
    """rulesync 17's rule targets, each mapped or said why not, and every tool the
    registry says a format serves is one of them."""
    served = {tool.tool_id for entry in TARGETS for tool in entry.also_read_by}
    rulesync_ids = {"copilot-cli": "copilotcli"}
    assert {rulesync_ids.get(tool, tool) for tool in served} <= {*RULESYNC_ALSO, *RULESYNC_NONE}
    assert {*RULESYNC_TARGETS.values(), *RULESYNC_ALSO, *RULESYNC_NONE} == set(RULESYNC_17_TARGETS)


def check_rulesync_reads(client, rulesync, tmp_path, format, target, *, globs=True):
    for file in export(client, format)["files"]:
        path = tmp_path / file["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file["content"], encoding="utf-8")
    rules = rulesync_import(rulesync, tmp_path, target)
    everything = "\n".join(rule.content for rule in rules.values())
    # The policy and the agent notes, and every document, one way or another.
    assert "- be kind" in everything, rules
    for text in TEXTS.values():
        assert text in everything, (text, list(rules))
    # A document exported as a rule of its own is one rule of rulesync's, its scope read.
    for name, said in SCOPED_RULES.get(format, {}).items():
        # (Not the root rule: Antigravity's AGENTS.md is Codex's, with every document.)
        [rule] = [
            r for r in rules.values() if TEXTS[name] in r.content and "- be kind" not in r.content
        ]
        assert rule.content.count("<!-- generated by agentdocs:") <= 1
        if said is not None and globs:
            assert rule.get("globs") == said, (name, rule.metadata)
