"""What a recipe and its profile mean for one render, as plain options.

And what a recipe may hold, checked on the way in (the API, the pages, the admin and
`services.policy` all ask these): its name, its params and its profiles. Unknown keys
are refused: a typo such as `agentDocumnet` would otherwise silently leave the default
in force.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, TypedDict, cast

from agentdocs.core.context import DEFAULT_BUDGET_BYTES
from agentdocs.core.errors import InvalidInput
from agentdocs.core.labels import validate_label_name
from agentdocs.core.paths import validate_path
from agentdocs.core.skill_index import SKILLS_PARAM, skill_selection
from agentdocs.core.stored_text import refuse_hidden_or_secret

AGENT_DOC_PARAM: Final = "agentDocument"
CONTEXT_BUDGET_PARAM: Final = "contextBudgetBytes"
CONTEXT_ENABLED_PARAM: Final = "contextEnabled"
LABEL_PARAM: Final = "label"
PROFILE_CLIENT_DOC: Final = "useClientAgentDoc"
DEFAULT_AGENT_DOCUMENT = "agent.md"
MAX_CONTEXT_BUDGET = 1024 * 1024
RECIPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
PROFILE_NAME = RECIPE_NAME


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


def _boolean(value: object, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("Must be true or false.", field=field)
    return value


def validate_params(params: object) -> RecipeParams:
    if not isinstance(params, dict):
        raise InvalidInput("params must be a JSON object.", field="params")
    for key, value in params.items():
        field = f"params.{key}"
        # Before any message that repeats the key; a secret is named by its place only.
        refuse_hidden_or_secret(str(key), field="params", what="A parameter name", prompt=True)
        if isinstance(value, str):
            refuse_hidden_or_secret(value, field=field, what="The parameter", prompt=True)
        if key == AGENT_DOC_PARAM:
            # Not set, "" and null are three different, meaningful states: keep them.
            if value is not None and value != "":
                validate_path(value, field=field)
        elif key == CONTEXT_BUDGET_PARAM:
            if (
                not isinstance(value, int)
                or isinstance(value, bool)
                or not (0 <= value <= MAX_CONTEXT_BUDGET)
            ):
                raise InvalidInput(
                    f"Must be an integer number of bytes from 0 to {MAX_CONTEXT_BUDGET}.",
                    field=field,
                )
        elif key == CONTEXT_ENABLED_PARAM:
            _boolean(value, field=field)
        elif key == LABEL_PARAM:
            validate_label_name(value, field=field)
        elif key == SKILLS_PARAM:
            skill_selection(value, field=field)
        else:
            raise InvalidInput(
                f"Unknown recipe parameter {key!r}; known: {AGENT_DOC_PARAM}, "
                f"{CONTEXT_BUDGET_PARAM}, {CONTEXT_ENABLED_PARAM}, {LABEL_PARAM}, "
                f"{SKILLS_PARAM}.",
                field=field,
            )
    return cast(RecipeParams, params)


def validate_profiles(profiles: object) -> dict[str, ProfileOptions]:
    if not isinstance(profiles, dict):
        raise InvalidInput(
            "profiles must be a JSON object of profile name → options.", field="profiles"
        )
    for name, options in profiles.items():
        refuse_hidden_or_secret(str(name), field="profiles", what="A profile name", prompt=True)
        field = f"profiles.{name}"
        if not PROFILE_NAME.match(name):
            raise InvalidInput(
                "A profile name is 1-64 letters, digits, '_', '.' or '-'.", field=field
            )
        if not isinstance(options, dict):
            raise InvalidInput("A profile must be a JSON object of options.", field=field)
        for key, value in options.items():
            refuse_hidden_or_secret(
                str(key), field=field, what="A profile option name", prompt=True
            )
            if key == PROFILE_CLIENT_DOC:
                _boolean(value, field=f"{field}.{key}")
            else:
                raise InvalidInput(
                    f"Unknown profile option {key!r}; known: {PROFILE_CLIENT_DOC}.",
                    field=f"{field}.{key}",
                )
    return cast(dict[str, ProfileOptions], profiles)


def validate_recipe_name(name: object) -> str:
    if not isinstance(name, str) or not RECIPE_NAME.match(name):
        raise InvalidInput("A recipe name is 1-64 letters, digits, '_', '.' or '-'.", field="name")
    return name
