"""What a recipe and its profile mean for one render, as plain options.

The parameter names are the ones `agentdocs.services.policy` validates on the
way in (a test keeps the two in step); they are repeated here because this
package stays free of Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypedDict

from agentdocs.core.context import DEFAULT_BUDGET_BYTES

AGENT_DOC_PARAM: Final = "agentDocument"
CONTEXT_BUDGET_PARAM: Final = "contextBudgetBytes"
CONTEXT_ENABLED_PARAM: Final = "contextEnabled"
LABEL_PARAM: Final = "label"
PROFILE_CLIENT_DOC: Final = "useClientAgentDoc"
DEFAULT_AGENT_DOCUMENT = "agent.md"


class RecipeParams(TypedDict, total=False):
    """A recipe's stored params. Each key has three states: not set (the default),
    ``""`` or null (off, for ``agentDocument``), or a value."""

    agentDocument: str | None
    contextBudgetBytes: int
    contextEnabled: bool
    # The label each document of a render resolves to (latest where it has none).
    label: str
    # The skills the process type is offered: "*" (all; also when not set), names, or [].
    skills: str | list[str] | None


class ProfileOptions(TypedDict, total=False):
    """One profile of a recipe, as stored."""

    useClientAgentDoc: bool


class RenderOptionsDict(TypedDict):
    """`RenderOptions` as JSON: in a render's account and in a binding record."""

    agent_document: str | None
    context_enabled: bool
    context_budget_bytes: int
    use_client_document: bool


@dataclass(frozen=True)
class RenderOptions:
    """``agent_document`` is the cascade path, or None when the recipe turns it off."""

    agent_document: str | None = DEFAULT_AGENT_DOCUMENT
    context_enabled: bool = True
    context_budget_bytes: int = DEFAULT_BUDGET_BYTES
    use_client_document: bool = False

    @classmethod
    def from_recipe(
        cls, params: RecipeParams | None, profile: ProfileOptions | None = None
    ) -> RenderOptions:
        """Not set → `agent.md`; `""` or null → off; any other string → that path."""
        params = params or {}
        profile = profile or {}
        agent_document: str | None
        if AGENT_DOC_PARAM not in params:
            agent_document = DEFAULT_AGENT_DOCUMENT
        else:
            agent_document = params[AGENT_DOC_PARAM] or None
        return cls(
            agent_document=agent_document,
            context_enabled=params.get(CONTEXT_ENABLED_PARAM, True) is not False,
            context_budget_bytes=params.get(CONTEXT_BUDGET_PARAM, DEFAULT_BUDGET_BYTES),
            use_client_document=profile.get(PROFILE_CLIENT_DOC, False) is True,
        )

    def as_dict(self) -> RenderOptionsDict:
        return {
            "agent_document": self.agent_document,
            "context_enabled": self.context_enabled,
            "context_budget_bytes": self.context_budget_bytes,
            "use_client_document": self.use_client_document,
        }
