"""The target registry: every agent tool agentdocs exports to, one declarative entry each.

An entry says which files the tool reads (its main file, and the folder and suffix of
its per-document rule files), how its frontmatter scopes a rule
(`agentdocs.core.tool_scoping`), the size limits it applies with the place they are
documented, and so what importing its files makes of them:

- the main file of a tool that has one at the repository's root (`AGENTS.md`,
  `CLAUDE.md`, `.rules`, ...) becomes `agent.md`; of several, the first in
  `AGENT_NOTES_SOURCES` wins;
- a rule file `<rules_dir><name><rule_suffix>` becomes `.AGENTS/<name>.md`, its
  frontmatter read by the tool's scoping style;
- the main file a tool keeps among its rule files (`.cursor/rules/agentdocs.mdc`) is,
  when agentdocs wrote it, agentdocs' own export of the policy and agent notes;
- a tool that reads an instruction file per folder (`Nested`: Codex's `AGENTS.md` in
  every folder from the root down to the working folder, Claude Code's `CLAUDE.md`,
  Gemini CLI's `GEMINI.md`) gets a document scoped to exactly one folder
  (`globs: src/api/**`) as that folder's file (`src/api/AGENTS.md`), and such a file
  imports back as `.AGENTS/<folder>.md` with `globs: <folder>/**`.

Each entry has an ``id``, the name `--tool` and `?tool=` take (`codex`, `cursor`).

The export (`agentdocs.core.export`), the import (`agentdocs.core.agent_files`), the
Export page, `GET .../export/formats` and the CLI's list of formats all read this
registry, so adding a tool is one entry here (and one round-trip test).

Plain Python: the CLI imports it without Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypedDict

from agentdocs.core import tool_scoping
from agentdocs.core.session_hooks import (
    CLAUDE_SESSION_START,
    CODEX_SESSION_START,
    CURSOR_SESSION_START,
    GEMINI_SESSION_START,
    SessionHook,
)
from agentdocs.core.tool_scoping import ScopingStyle

ALL = "all"
# The stem of the main file a tool keeps among its rule files, and so a name no context
# document's rule file takes (such a document's file is `agentdocs-context`).
MAIN_RULE_NAME = "agentdocs"

Unit = Literal["bytes", "characters"]
# What one limit counts: the main file, each file on its own, every file on the path
# from the root down to a working folder (Codex's budget), or all of the format's files.
Applies = Literal["main", "each", "path", "total"]
# How the files of a `path` or `total` limit are spent: root first (the most specific
# file is the one cut), or in the order the tool loads them.
Order = Literal["root-first", "load-order"]
# How a tool joins the per-folder files of a path: every one, root first (`path`), or
# only the closest to the file (`closest`: it shadows the ones above it).
Reach = Literal["path", "closest"]
Effect = Literal["cut", "warn"]


class LimitDict(TypedDict):
    tool: str
    tool_id: str
    applies_to: Applies
    order: Order
    limit: int
    unit: Unit
    effect: Effect
    source: str


class ReadByDict(TypedDict):
    tool_id: str
    tool: str
    docs: str
    note: str


class NestedDict(TypedDict):
    files: list[str]
    reach: Reach
    when: str
    source: str


class TargetDict(TypedDict):
    id: str
    format: str
    tool: str
    docs: str
    files: list[str]
    scoping: str
    scoping_fields: str
    nested: NestedDict | None
    limits: list[LimitDict]
    tool_id: str
    also_read_by: list[ReadByDict]


@dataclass(frozen=True)
class Limit:
    """A size a tool reads up to (``cut``: the rest is dropped without a word) or warns
    beyond (``warn``), in the ``unit`` it counts. ``applies_to``: the main file, each of
    the format's files, the files on the path from the root to a working folder
    (``path``, one budget), or all of them together (``total``); ``order``: how such a
    budget is spent. ``tool_id``: the registry id warnings name (`codex`)."""

    tool: str
    applies_to: Applies
    limit: int
    unit: Unit
    effect: Effect
    source: str
    tool_id: str = ""
    order: Order = "load-order"

    def as_dict(self) -> LimitDict:
        return {
            "tool": self.tool,
            "tool_id": self.tool_id,
            "applies_to": self.applies_to,
            "order": self.order,
            "limit": self.limit,
            "unit": self.unit,
            "effect": self.effect,
            "source": self.source,
        }


@dataclass(frozen=True)
class ReadBy:
    """A tool that reads a format's files as they are, and so needs no format of its
    own: ``tool_id`` is the id CLI options take for it (`agentdocs bind --repo DIR
    --tool amp`), ``docs`` where the tool documents the files it reads, ``note`` why
    the format serves it."""

    tool_id: str
    tool: str
    docs: str
    note: str = ""

    def as_dict(self) -> ReadByDict:
        return {"tool_id": self.tool_id, "tool": self.tool, "docs": self.docs, "note": self.note}


@dataclass(frozen=True)
class Nested:
    """The instruction file a tool reads in a folder below the root, beside the root's.

    ``files``: the names it looks for in each folder, the first present winning
    (Codex: `AGENTS.override.md`, then `AGENTS.md`); the export writes the last one.
    ``reach``: `path`: the tool loads every folder's file from the root down to the
    working folder (or the folder of the file it reads), root first; `closest`: only the
    closest one to the file applies, the ones above it shadowed. ``source``: where the
    tool documents it."""

    files: tuple[str, ...]
    reach: Reach
    source: str
    # When the tool reads a folder's file, in words (the explainer says it).
    when: str = "on the path from the root"

    @property
    def written(self) -> str:
        return self.files[-1]

    def as_dict(self) -> NestedDict:
        return {
            "files": list(self.files),
            "reach": self.reach,
            "when": self.when,
            "source": self.source,
        }


def nested_folder(nested: Nested | None, path: str) -> str | None:
    """The folder whose per-folder file of ``nested`` ``path`` is, or None (the root's
    file is a main file; hidden folders, `.github/`, hold no per-folder file)."""
    if nested is None or "/" not in path:
        return None
    folder, name = path.rsplit("/", 1)
    if name not in nested.files or any(part.startswith(".") for part in folder.split("/")):
        return None
    return folder


def files_on_path(nested: Nested | None, paths: Iterable[str], folder: str) -> list[str]:
    """Of ``paths``, the per-folder files of ``nested`` a tool loads working in
    ``folder`` (`""`: the root), root first, the first of its names present in each
    folder (`AGENTS.override.md` before `AGENTS.md`); the root's main file is not one,
    and hidden folders (and `..`) hold none."""
    if nested is None:
        return []
    present = set(paths)
    parts = [part for part in folder.split("/") if part]
    found: list[str] = []
    for depth in range(1, len(parts) + 1):
        if parts[depth - 1].startswith("."):
            break
        here = "/".join(parts[:depth])
        name = next((n for n in nested.files if f"{here}/{n}" in present), None)
        if name is not None:
            found.append(f"{here}/{name}")
    return found


@dataclass(frozen=True)
class SkillsFolder:
    """Where a tool reads Agent Skills in a repository: each skill is the folder
    ``<dir><name>/`` holding its `SKILL.md` and bundled files. ``source``: where the
    tool documents it."""

    dir: str
    source: str

    def skill_path(self, name: str, path: str) -> str:
        return f"{self.dir}{name}/{path}"

    def split(self, path: str) -> tuple[str, str] | None:
        """``(name, path in the skill)`` of a file ``path`` under this folder, or None."""
        if not path.startswith(self.dir):
            return None
        name, _, rest = path[len(self.dir) :].partition("/")
        return (name, rest) if name and rest else None


@dataclass(frozen=True)
class Target:
    """One agent tool's files.

    ``main``: the file with the policy and agent notes. ``rules_dir`` and
    ``rule_suffix``: where one rule file per context document goes (None: the tool
    reads one file, and every document is in ``main``). ``always_in_main``: documents
    that always apply stay in ``main`` (the tool reads it beside its rules), and only
    scoped ones get a rule file; otherwise every document the scoping style can express
    gets one, and ``main`` is itself a rule (with the style's always-applied
    frontmatter).
    """

    format: str
    tool: str
    docs: str
    main: str
    scoping: ScopingStyle
    id: str = ""
    rules_dir: str | None = None
    rule_suffix: str = ".md"
    always_in_main: bool = False
    limits: tuple[Limit, ...] = ()
    # None: no session hook we could confirm in the tool's documentation (docs/cli.md
    # lists what was looked up); `agentdocs run` binds for such tools.
    session_hook: SessionHook | None = None
    # The file the tool reads per folder (None: it reads none, or none we confirmed).
    nested: Nested | None = None

    def nested_path(self, folder: str) -> str:
        """The file this tool's export writes for ``folder`` (`src/api`)."""
        assert self.nested is not None
        return f"{folder}/{self.nested.written}"

    def nested_folder(self, path: str) -> str | None:
        """The folder whose per-folder file ``path`` is (`src/api/AGENTS.md` -> `src/api`),
        or None: not such a file (the root's is the main file)."""
        return nested_folder(self.nested, path)

    # Where the tool reads skills (None: no skills folder in its documentation).
    skills: SkillsFolder | None = None

    @property
    def main_is_a_rule(self) -> bool:
        """Whether ``main`` sits among the rule files (and carries rule frontmatter)."""
        return self.rules_dir is not None and self.main.startswith(self.rules_dir)

    def rule_path(self, name: str) -> str:
        assert self.rules_dir is not None
        if self.main_is_a_rule and name == MAIN_RULE_NAME:
            name = f"{MAIN_RULE_NAME}-context"
        return f"{self.rules_dir}{name}{self.rule_suffix}"

    def rule_name(self, path: str) -> str | None:
        """``<name>`` of a rule file ``<rules_dir><name><rule_suffix>`` of this tool, or
        None. Rules in subfolders are not imported (`.AGENTS/` is one level deep)."""
        if self.rules_dir is None:
            return None
        if not (path.startswith(self.rules_dir) and path.endswith(self.rule_suffix)):
            return None
        name = path[len(self.rules_dir) : len(path) - len(self.rule_suffix)]
        if not name or "/" in name or name.startswith("."):
            return None
        return name

    def file_patterns(self) -> list[str]:
        files = [self.main]
        if self.rules_dir is not None:
            pattern = f"{self.rules_dir}*{self.rule_suffix}"
            if pattern != self.main:
                files.append(pattern)
        return files

    def as_dict(self) -> TargetDict:
        return {
            "id": self.id,
            "format": self.format,
            "tool": self.tool,
            "docs": self.docs,
            "files": self.file_patterns(),
            "scoping": self.scoping.name,
            "scoping_fields": self.scoping.summary,
            "nested": self.nested.as_dict() if self.nested else None,
            "limits": [limit.as_dict() for limit in self.limits],
            "tool_id": self.tool_id,
            "also_read_by": [tool.as_dict() for tool in self.also_read_by],
        }

    @property
    def tool_id(self) -> str:
        """The id CLI options take for this tool (`agentdocs bind --repo DIR --tool`,
        `agentdocs run --tool`, and `agentdocs hooks --tool` for a tool with a session
        hook): its session hook's tool, else its format (`sync --format` takes that)."""
        if self.id:
            return self.id
        return self.session_hook.tool if self.session_hook is not None else self.format

    @property
    def also_read_by(self) -> tuple[ReadBy, ...]:
        """Other tools that read exactly what this format writes (`READ_BY`)."""
        return READ_BY.get(self.format, ())


CODEX_AGENTS_MD = Limit(
    tool="Codex",
    tool_id="codex",
    applies_to="path",
    order="root-first",
    limit=32 * 1024,
    unit="bytes",
    effect="cut",
    source="https://developers.openai.com/codex/guides/agents-md "
    "(project_doc_max_bytes, 32 KiB by default: one budget for all the files on the path, "
    "read root first, so the most specific file is the one cut)",
)
CODEX_NESTED = Nested(
    files=("AGENTS.override.md", "AGENTS.md"),
    reach="path",
    when="on the path from the root to the working folder, root first",
    source="https://developers.openai.com/codex/guides/agents-md (in each folder from the "
    "project root down to the working folder, AGENTS.override.md or else AGENTS.md, joined "
    "root first)",
)
# The AGENTS.md convention for the tools that read it without Codex's joining.
AGENTS_MD_CLOSEST = Nested(
    files=("AGENTS.md",),
    reach="closest",
    source="https://agents.md (nested AGENTS.md files: the closest one to the edited file "
    "takes precedence)",
)
CLAUDE_NESTED = Nested(
    files=("CLAUDE.md",),
    reach="path",
    when="loaded when Claude Code reads a file there (at launch when it is the working folder "
    "or above it)",
    source="https://code.claude.com/docs/en/memory (CLAUDE.md files above the working folder "
    "load at launch; a subfolder's CLAUDE.md loads when Claude reads files in it)",
)
GEMINI_NESTED = Nested(
    files=("GEMINI.md",),
    reach="path",
    when="from the root down, and in the folders a tool touches",
    source="https://google-gemini.github.io/gemini-cli/docs/cli/gemini-md.html (GEMINI.md "
    "files from the project root down, and in the folders a tool touches, all concatenated; "
    "seen with Gemini CLI 0.61, agentdocs issue #38)",
)
COPILOT_CODE_REVIEW = Limit(
    tool="Copilot code review",
    tool_id="copilot",
    applies_to="each",
    limit=4000,
    unit="characters",
    effect="cut",
    source="https://docs.github.com/en/copilot/concepts/agents/code-review "
    "(reads the first 4,000 characters of any custom instruction file)",
)
WINDSURF_PER_FILE = Limit(
    tool="Windsurf",
    tool_id="windsurf",
    applies_to="each",
    limit=12000,
    unit="characters",
    effect="cut",
    source="https://docs.windsurf.com/windsurf/cascade/memories#rules "
    "(a rule file is limited to 12,000 characters; the rest is truncated)",
)
WINDSURF_TOTAL = Limit(
    tool="Windsurf",
    tool_id="windsurf",
    applies_to="total",
    limit=12000,
    unit="characters",
    effect="cut",
    source="https://docs.windsurf.com/windsurf/cascade/memories#rules "
    "(rules beyond 12,000 characters in total are truncated, global rules first)",
)
DEVIN_PER_FILE = Limit(
    tool="Devin Desktop",
    applies_to="each",
    limit=12000,
    unit="characters",
    effect="cut",
    source="https://docs.devin.ai/desktop/cascade/memories#rules "
    "(a workspace rule file is limited to 12,000 characters, as in Windsurf)",
)
CLAUDE_LARGE_MEMORY = Limit(
    tool="Claude Code",
    tool_id="claude-code",
    applies_to="main",
    limit=40000,
    unit="characters",
    effect="warn",
    source='https://code.claude.com/docs/en/memory (Claude Code warns "Large CLAUDE.md '
    'will impact performance" beyond 40,000 characters)',
)
CLAUDE_ALL_MEMORY = Limit(
    tool="Claude Code",
    tool_id="claude-code",
    applies_to="total",
    limit=120000,
    unit="characters",
    effect="warn",
    source="https://code.claude.com/docs/en/memory (Claude Code 2.1.332 warns when all its "
    "instruction files together pass 120,000 characters: measured, agentdocs issue #38)",
)

# Where each tool reads a repository's skills (issue 37), as its documentation says.
# `.agents/skills/` is the folder several tools share: the same skill, the same bytes.
AGENTS_SKILLS_DIR = ".agents/skills/"

TARGETS: tuple[Target, ...] = (
    Target(
        format="agents-md",
        id="codex",
        tool="Codex, and every tool that reads AGENTS.md",
        docs="https://agents.md",
        main=CODEX_SESSION_START.main,
        scoping=tool_scoping.NONE,
        limits=(CODEX_AGENTS_MD,),
        session_hook=CODEX_SESSION_START,
        nested=CODEX_NESTED,
        skills=SkillsFolder(
            AGENTS_SKILLS_DIR,
            "https://developers.openai.com/codex/skills (repository scope: .agents/skills from "
            "the working folder up to the repository's root)",
        ),
    ),
    Target(
        format="claude-md",
        id="claude-code",
        tool="Claude Code",
        docs="https://code.claude.com/docs/en/memory",
        main=CLAUDE_SESSION_START.main,
        scoping=tool_scoping.CLAUDE,
        rules_dir=".claude/rules/",
        always_in_main=True,
        limits=(CLAUDE_LARGE_MEMORY, CLAUDE_ALL_MEMORY),
        session_hook=CLAUDE_SESSION_START,
        nested=CLAUDE_NESTED,
        skills=SkillsFolder(".claude/skills/", "https://code.claude.com/docs/en/skills"),
    ),
    Target(
        format="gemini-md",
        id="gemini-cli",
        tool="Gemini CLI",
        docs="https://google-gemini.github.io/gemini-cli/docs/cli/gemini-md.html",
        main=GEMINI_SESSION_START.main,
        scoping=tool_scoping.NONE,
        session_hook=GEMINI_SESSION_START,
        nested=GEMINI_NESTED,
        skills=SkillsFolder(
            ".gemini/skills/",
            "https://geminicli.com/docs/cli/using-agent-skills/ (workspace skills: .gemini/skills/ "
            "or the .agents/skills/ alias)",
        ),
    ),
    Target(
        format="copilot",
        id="copilot",
        tool="GitHub Copilot",
        docs="https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/"
        "add-repository-instructions",
        main=".github/copilot-instructions.md",
        scoping=tool_scoping.COPILOT,
        rules_dir=".github/instructions/",
        rule_suffix=".instructions.md",
        always_in_main=True,
        limits=(COPILOT_CODE_REVIEW,),
        skills=SkillsFolder(
            ".github/skills/",
            "https://docs.github.com/en/copilot/concepts/agents/about-agent-skills",
        ),
    ),
    Target(
        format="cursor",
        id="cursor",
        tool="Cursor",
        docs="https://cursor.com/docs/context/rules",
        main=CURSOR_SESSION_START.main,
        scoping=tool_scoping.CURSOR,
        rules_dir=".cursor/rules/",
        rule_suffix=".mdc",
        session_hook=CURSOR_SESSION_START,
        skills=SkillsFolder(".cursor/skills/", "https://cursor.com/docs/context/skills"),
    ),
    Target(
        format="antigravity",
        id="antigravity",
        tool="Google Antigravity",
        docs="https://antigravity.google/docs/rules-workflows",
        main="AGENTS.md",
        scoping=tool_scoping.TRIGGER,
        rules_dir=".agents/rules/",
        always_in_main=True,
        skills=SkillsFolder(AGENTS_SKILLS_DIR, "https://antigravity.google/docs/skills"),
    ),
    Target(
        format="windsurf",
        id="windsurf",
        tool="Windsurf",
        docs="https://docs.windsurf.com/windsurf/cascade/memories#rules",
        main=".windsurf/rules/agentdocs.md",
        scoping=tool_scoping.TRIGGER,
        rules_dir=".windsurf/rules/",
        limits=(WINDSURF_PER_FILE, WINDSURF_TOTAL),
        skills=SkillsFolder(
            ".windsurf/skills/", "https://docs.windsurf.com/windsurf/cascade/skills"
        ),
    ),
    Target(
        format="kiro",
        id="kiro",
        tool="Kiro",
        docs="https://kiro.dev/docs/steering/",
        main=".kiro/steering/agentdocs.md",
        scoping=tool_scoping.KIRO,
        rules_dir=".kiro/steering/",
        skills=SkillsFolder(".kiro/skills/", "https://kiro.dev/docs/skills/"),
    ),
    Target(
        format="cline",
        id="cline",
        tool="Cline",
        docs="https://docs.cline.bot/features/cline-rules",
        main=".clinerules/agentdocs.md",
        scoping=tool_scoping.CLINE,
        rules_dir=".clinerules/",
        skills=SkillsFolder(".cline/skills/", "https://docs.cline.bot/customization/skills"),
    ),
    Target(
        format="junie",
        id="junie",
        tool="JetBrains Junie",
        docs="https://www.jetbrains.com/help/junie/customize-guidelines.html",
        main=".junie/guidelines.md",
        scoping=tool_scoping.NONE,
        skills=SkillsFolder(".junie/skills/", "https://junie.jetbrains.com/docs/agent-skills.html"),
    ),
    Target(
        format="zed",
        id="zed",
        tool="Zed",
        docs="https://zed.dev/docs/ai/rules",
        main=".rules",
        scoping=tool_scoping.NONE,
        skills=SkillsFolder(AGENTS_SKILLS_DIR, "https://zed.dev/docs/ai/skills"),
    ),
    Target(
        format="roo",
        id="roo",
        tool="Roo Code",
        docs="https://docs.roocode.com/features/custom-instructions",
        main=".roo/rules/agentdocs.md",
        scoping=tool_scoping.NONE,
        rules_dir=".roo/rules/",
        skills=SkillsFolder(".roo/skills/", "https://docs.roocode.com/features/skills"),
    ),
    Target(
        format="continue",
        id="continue",
        tool="Continue",
        docs="https://docs.continue.dev/customize/deep-dives/rules",
        main=".continue/rules/agentdocs.md",
        scoping=tool_scoping.CONTINUE,
        rules_dir=".continue/rules/",
    ),
    Target(
        format="augment",
        id="augment",
        tool="Augment Code",
        docs="https://docs.augmentcode.com/setup-augment/guidelines",
        main=".augment/rules/agentdocs.md",
        scoping=tool_scoping.AUGMENT,
        rules_dir=".augment/rules/",
        skills=SkillsFolder(".augment/skills/", "https://docs.augmentcode.com/cli/skills"),
    ),
    Target(
        format="qwen",
        id="qwen",
        tool="Qwen Code",
        docs="https://qwenlm.github.io/qwen-code-docs/en/users/features/rules/",
        main="QWEN.md",
        scoping=tool_scoping.CLAUDE,
        rules_dir=".qwen/rules/",
        always_in_main=True,
        skills=SkillsFolder(
            ".qwen/skills/",
            "https://qwenlm.github.io/qwen-code-docs/en/users/features/skills/",
        ),
    ),
    Target(
        format="goose",
        id="goose",
        tool="goose",
        docs="https://block.github.io/goose/docs/guides/using-goosehints",
        main=".goosehints",
        scoping=tool_scoping.NONE,
        skills=SkillsFolder(
            AGENTS_SKILLS_DIR,
            "https://goose-docs.ai/docs/guides/context-engineering/using-skills/ (.agents/skills/ "
            "recommended; .goose/skills/ read for backward compatibility)",
        ),
    ),
    # Devin reads the root AGENTS.md (Devin CLI and Devin Desktop) and, in Devin Desktop
    # (Windsurf's Cascade, renamed), `.devin/rules/*.md` with Windsurf's `trigger`
    # frontmatter: as Antigravity, every document in AGENTS.md (Codex's bytes), and the
    # scoped ones also as glob rules.
    Target(
        format="devin",
        id="devin",
        tool="Devin",
        docs="https://docs.devin.ai/desktop/cascade/memories",
        main="AGENTS.md",
        scoping=tool_scoping.TRIGGER,
        rules_dir=".devin/rules/",
        always_in_main=True,
        limits=(DEVIN_PER_FILE,),
    ),
    Target(
        format="codebuddy",
        id="codebuddy",
        tool="CodeBuddy Code",
        docs="https://www.codebuddy.ai/docs/cli/memory",
        main="CODEBUDDY.md",
        scoping=tool_scoping.CODEBUDDY,
        rules_dir=".codebuddy/rules/",
        always_in_main=True,
    ),
    Target(
        format="aiassistant",
        id="aiassistant",
        tool="JetBrains AI Assistant",
        docs="https://www.jetbrains.com/help/ai-assistant/configure-project-rules.html",
        main=".aiassistant/rules/agentdocs.md",
        scoping=tool_scoping.AIASSISTANT,
        rules_dir=".aiassistant/rules/",
    ),
    # Hermes loads one kind of project file, the first found: `.hermes.md` before
    # AGENTS.md and CLAUDE.md.
    Target(
        format="hermes",
        id="hermes",
        tool="Hermes Agent",
        docs="https://hermes-agent.nousresearch.com/docs/user-guide/features/context-files",
        main=".hermes.md",
        scoping=tool_scoping.NONE,
    ),
    # Kimi Code reads `.kimi-code/AGENTS.md` instead of the root AGENTS.md when present.
    Target(
        format="kimi-code",
        id="kimi-code",
        tool="Kimi Code",
        docs="https://moonshotai.github.io/kimi-code/en/customization/agents.html",
        main=".kimi-code/AGENTS.md",
        scoping=tool_scoping.NONE,
    ),
    Target(
        format="reasonix",
        id="reasonix",
        tool="DeepSeek Reasonix",
        docs="https://github.com/esengine/DeepSeek-Reasonix",
        main="REASONIX.md",
        scoping=tool_scoping.NONE,
    ),
    Target(
        format="replit",
        id="replit",
        tool="Replit Agent",
        docs="https://docs.replit.com/features/project-setup/replit-dot-md",
        main="replit.md",
        scoping=tool_scoping.NONE,
    ),
    # Tabnine CLI loads TABNINE.md; the IDE agent's `.tabnine/guidelines/*.md` have no
    # scoping, so they would only say again what TABNINE.md says.
    Target(
        format="tabnine",
        id="tabnine",
        tool="Tabnine CLI",
        docs="https://docs.tabnine.com/main/getting-started/tabnine-cli/features/settings/"
        "settings-reference",
        main="TABNINE.md",
        scoping=tool_scoping.NONE,
    ),
    # TAKT's policy facets are plain Markdown (no frontmatter): one file holds everything.
    Target(
        format="takt",
        id="takt",
        tool="TAKT",
        docs="https://github.com/nrslib/takt",
        main=".takt/facets/policies/agentdocs.md",
        scoping=tool_scoping.NONE,
        rules_dir=".takt/facets/policies/",
    ),
)

# Tools that read exactly the files a format writes, by format: the format serves them
# (the Export page, `GET .../export/formats` and docs/export-and-sync.md list them). A
# tool whose own rules folder has no scoping (`.bob/rules/`, `.kilo/rules/`, ...) reads
# the root AGENTS.md beside it: writing the folder too would give it every rule twice.
AGENTS_MD_RULES = (
    "reads the root AGENTS.md; its rules folder has no scoping, so AGENTS.md holds it all"
)
READ_BY: dict[str, tuple[ReadBy, ...]] = {
    "agents-md": (
        ReadBy("amp", "Amp", "https://ampcode.com/manual"),
        ReadBy(
            "bob", "IBM Bob", "https://bob.ibm.com/docs/ide/configuration/rules", AGENTS_MD_RULES
        ),
        ReadBy("commandcode", "Command Code", "https://commandcode.ai/docs"),
        ReadBy(
            "cortexcode",
            "Snowflake Cortex Code",
            "https://docs.snowflake.com/en/user-guide/cortex-code/extensibility",
        ),
        ReadBy(
            "factorydroid",
            "Factory Droid",
            "https://docs.factory.ai/cli/configuration/agents-md",
            AGENTS_MD_RULES,
        ),
        ReadBy(
            "grokcli",
            "Grok Build (xAI)",
            "https://docs.x.ai/build/features/project-rules",
            "reads AGENTS.md, CLAUDE.md and the *.md of .grok/rules/ (and .claude/rules/, "
            ".cursor/rules/) together: a .grok/rules/ copy would give it every rule twice",
        ),
        ReadBy("kilo", "Kilo Code", "https://kilo.ai/docs", AGENTS_MD_RULES),
        ReadBy("musecode", "Muse Code", "https://dev.meta.ai/docs/muse-code/extending"),
        ReadBy("opencode", "OpenCode", "https://opencode.ai/docs/rules/"),
        ReadBy("pi", "Pi", "https://pi.dev/docs/latest/usage"),
        ReadBy("pool", "Pool (Poolside)", "https://docs.poolside.ai/agent-instructions"),
        ReadBy(
            "rovodev",
            "Rovo Dev CLI",
            "https://support.atlassian.com/rovo/docs/use-memory-in-rovo-dev-cli/",
        ),
        ReadBy("vibe", "Mistral Vibe", "https://github.com/mistralai/mistral-vibe"),
        ReadBy("warp", "Warp", "https://docs.warp.dev/knowledge-and-collaboration/rules"),
        ReadBy("zcode", "ZCode", "https://zcode.z.ai/en/docs"),
        ReadBy("dsh", "DeepSeek Harness", "https://github.com/deepseek-ai/deepseek-harness"),
        ReadBy(
            "crush",
            "Crush",
            "https://github.com/charmbracelet/crush#context-files",
            "reads AGENTS.md, CRUSH.md, CLAUDE.md and more, all of them together: a CRUSH.md "
            "beside AGENTS.md would give it every rule twice",
        ),
        ReadBy(
            "deepagents",
            "Deep Agents Code",
            "https://docs.langchain.com/oss/python/deepagents/code/memory-and-skills",
            "reads the root AGENTS.md and .deepagents/AGENTS.md together: the second would "
            "give it every rule twice",
        ),
    ),
    "antigravity": (
        ReadBy(
            "antigravity-cli", "Antigravity CLI", "https://antigravity.google/docs/rules-workflows"
        ),
    ),
    "copilot": (
        ReadBy(
            "copilot-cli",
            "GitHub Copilot CLI",
            "https://github.com/github/copilot-cli",
        ),
    ),
    "kiro": (ReadBy("kiro-cli", "Kiro CLI", "https://kiro.dev/docs/steering/"),),
    "roo": (ReadBy("zoocode", "Zoo Code", "https://docs.zoocode.dev"),),
}

BY_FORMAT: dict[str, Target] = {target.format: target for target in TARGETS}
FORMATS: tuple[str, ...] = tuple(BY_FORMAT)
EXPORT_FORMATS: tuple[str, ...] = (*FORMATS, ALL)

# Root files that import as `agent.md`, the first one present winning: each distinct
# main file that is not among its tool's rule files, in registry order.
AGENT_NOTES_SOURCES: tuple[str, ...] = tuple(
    dict.fromkeys(target.main for target in TARGETS if not target.main_is_a_rule)
)


# The order rule files of one name compete in on import, and the CLI collects them in:
# Cursor's first (the richest scoping, and the order before the registry), then the
# registry's.
RULE_PRECEDENCE: tuple[Target, ...] = (
    BY_FORMAT["cursor"],
    *(entry for entry in TARGETS if entry.rules_dir and entry.format != "cursor"),
)


SESSION_HOOKS: dict[str, Target] = {
    entry.session_hook.tool: entry for entry in TARGETS if entry.session_hook is not None
}


CONTEXT_HOOKS: dict[str, Target] = {
    name: entry
    for name, entry in SESSION_HOOKS.items()
    if entry.session_hook is not None and entry.session_hook.context_events
}


def named(name: str) -> Target | None:
    """The entry a `--tool` names: its format (`claude-md`), its session hook's tool
    (`claude-code`) or a tool it serves (`amp`: `agents-md`); None for none."""
    loading = TOOLS_BY_SLUG.get(name)
    return (
        BY_FORMAT.get(name)
        or SESSION_HOOKS.get(name)
        or (loading.target if loading is not None else None)
    )


def target(format: str) -> Target:
    """The entry of ``format`` (KeyError for an unknown one: check `EXPORT_FORMATS`)."""
    return BY_FORMAT[format]


def rule_owner(path: str) -> tuple[Target, str] | None:
    """The tool whose rule file ``path`` is, and the rule's name; the first such tool in
    `RULE_PRECEDENCE`."""
    for entry in RULE_PRECEDENCE:
        name = entry.rule_name(path)
        if name is not None:
            return entry, name
    return None


def exported_main_rule(path: str) -> Target | None:
    """The tool whose main file, kept among its rules, ``path`` is
    (`.cursor/rules/agentdocs.mdc`)."""
    return next((t for t in TARGETS if t.main_is_a_rule and t.main == path), None)


def rule_folders() -> list[tuple[str, str]]:
    """Each ``(rules_dir, rule_suffix)`` a client collects rule files from, once."""
    return list(dict.fromkeys((t.rules_dir, t.rule_suffix) for t in RULE_PRECEDENCE if t.rules_dir))


def skills_folders() -> list[str]:
    """Each folder a tool reads skills from, once, in registry order."""
    return list(dict.fromkeys(t.skills.dir for t in TARGETS if t.skills is not None))


def skill_owner(path: str) -> tuple[str, str, str] | None:
    """``(skills folder, skill name, path in the skill)`` of a file ``path`` under a
    tool's skills folder, or None."""
    for entry in TARGETS:
        found = entry.skills.split(path) if entry.skills is not None else None
        if found is not None:
            assert entry.skills is not None
            return (entry.skills.dir, *found)
    return None


def registry_as_dicts() -> list[TargetDict]:
    return [entry.as_dict() for entry in TARGETS]


@dataclass(frozen=True)
class LoadingTool:
    """An agent tool as `agentdocs bind --repo` and the explainer see it: its slug (the
    registry ``id``), the export format whose files it reads, and the order it loads
    them in (its main file first, then its rule files by name, as each tool's
    documentation describes). ``nested``: how it reads per-folder files, when not as
    its format's entry declares (the AGENTS.md readers other than Codex: closest wins)."""

    slug: str
    format: str
    nested_override: Nested | None = None

    @property
    def target(self) -> Target:
        return BY_FORMAT[self.format]

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The size limits this tool applies: its format's, which are its format's own
        tool's (a tool the format only serves, `amp` reading Codex's AGENTS.md,
        documents none of them)."""
        entry = self.target
        return entry.limits if self.slug == entry.tool_id else ()

    @property
    def nested(self) -> Nested | None:
        return self.nested_override or self.target.nested

    def nested_folder(self, path: str) -> str | None:
        return nested_folder(self.nested, path)

    def on_path(self, paths: list[str], folder: str) -> list[str]:
        """Of ``paths``, the per-folder files this tool loads working in ``folder``
        (`files_on_path`)."""
        return files_on_path(self.nested, paths, folder)

    def load_order(self, paths: list[str], folder: str = "") -> list[str]:
        """The files of ``paths`` (relative, POSIX) this tool loads working in ``folder``,
        in its order: the main file, the per-folder files from the root down to
        ``folder`` (only the closest for a `closest` tool, which shadows the root's),
        then its rule files sorted by path (a tool that keeps its main file among its
        rules reads them all in name order)."""
        entry = self.target
        main = [] if entry.main_is_a_rule else [p for p in paths if p == entry.main]
        nested = self.on_path(paths, folder)
        if nested and self.nested is not None and self.nested.reach == "closest":
            main, nested = [], nested[-1:]
        rules = sorted(
            p
            for p in paths
            if entry.rule_name(p) is not None or (entry.main_is_a_rule and p == entry.main)
        )
        return main + nested + rules


# The tools a repository run is bound for, by the slug hooks and `agentdocs run` pass:
# each entry's id, and `agents-md-readers` for the tools that read AGENTS.md the convention's way.
LOADING_TOOLS: tuple[LoadingTool, ...] = (
    *(LoadingTool(entry.tool_id, entry.format) for entry in TARGETS),
    LoadingTool("agents-md-readers", "agents-md", nested_override=AGENTS_MD_CLOSEST),
    # The tools a format serves (`READ_BY`), by their ids.
    *(LoadingTool(tool.tool_id, format) for format, tools in READ_BY.items() for tool in tools),
)
TOOLS_BY_SLUG: dict[str, LoadingTool] = {tool.slug: tool for tool in LOADING_TOOLS}
