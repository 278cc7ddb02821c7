"""Merging the `memory.*` settings into the policy layer.

Tenant then project, additive: a project value overrides a tenant value of
the same key, unless the tenant setting is enforced; then the tenant value
stands and the override is reported as refused.

Only `memory.*` keys are policy for agents; other settings (`security.*`) govern
the tenant's own writes and never reach a prompt. Which keys a setting may have is
checked here too (`validate_setting_key`), for the API, the pages, the admin and
`services.policy` alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from agentdocs.core import review as review_rules
from agentdocs.core.errors import InvalidInput

POLICY_KEY_PREFIX = "memory."
SETTING_KEY = re.compile(r"^memory\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,118}\Z")
SECRET_OVERRIDE_KEY = "security.secretOverride"
SECRET_OVERRIDE_VALUES = ("on", "off")
HIDDEN_OVERRIDE_KEY = "security.hiddenOverride"
SECURITY_KEYS = (SECRET_OVERRIDE_KEY, HIDDEN_OVERRIDE_KEY)


class SettingAccount(TypedDict):
    """A setting in force, as the policy layer's account and a binding record list it."""

    key: str
    value: str
    level: str
    enforced: bool


class RefusedOverride(TypedDict):
    """A project value the tenant's enforced setting refused."""

    key: str
    tenant_value: str
    project_value: str
    detail: str


@dataclass(frozen=True)
class PolicySetting:
    key: str
    value: str
    level: str  # "tenant" or "project"
    enforced: bool = False

    def __post_init__(self) -> None:
        if self.level not in ("tenant", "project"):
            raise ValueError(f"A setting's level is tenant or project, not {self.level!r}")


@dataclass(frozen=True)
class MergedPolicy:
    values: tuple[PolicySetting, ...]  # the setting in force for each key, sorted by key
    refused: tuple[tuple[PolicySetting, PolicySetting], ...]  # (enforced tenant, project)

    @property
    def lines(self) -> str:
        return "\n".join(f"{setting.key}: {setting.value}" for setting in self.values)

    def settings_account(self) -> list[SettingAccount]:
        return [
            {
                "key": setting.key,
                "value": setting.value,
                "level": setting.level,
                "enforced": setting.enforced,
            }
            for setting in self.values
        ]

    def refused_account(self) -> list[RefusedOverride]:
        return [
            {
                "key": tenant.key,
                "tenant_value": tenant.value,
                "project_value": project.value,
                "detail": (
                    f"The project's value for {tenant.key} was refused: "
                    "the tenant enforces its own."
                ),
            }
            for tenant, project in self.refused
        ]


def merge_policy(settings: Iterable[PolicySetting]) -> MergedPolicy:
    tenant: dict[str, PolicySetting] = {}
    project: dict[str, PolicySetting] = {}
    for setting in settings:
        if not setting.key.startswith(POLICY_KEY_PREFIX):
            continue
        (tenant if setting.level == "tenant" else project)[setting.key] = setting
    in_force = dict(tenant)
    refused: list[tuple[PolicySetting, PolicySetting]] = []
    for key, setting in project.items():
        tenant_setting = tenant.get(key)
        if tenant_setting is not None and tenant_setting.enforced:
            refused.append((tenant_setting, setting))
        else:
            in_force[key] = setting
    return MergedPolicy(
        values=tuple(in_force[key] for key in sorted(in_force)),
        refused=tuple(sorted(refused, key=lambda pair: pair[0].key)),
    )


def validate_setting_key(key: object) -> str:
    if not isinstance(key, str) or not (
        key in (*SECURITY_KEYS, *review_rules.REVIEW_KEYS) or SETTING_KEY.match(key)
    ):
        raise InvalidInput(
            "Setting keys start with `memory.` followed by letters, digits, '_', '.' or '-' "
            f"(at most 128 characters); the other keys are `{SECRET_OVERRIDE_KEY}`, "
            f"`{HIDDEN_OVERRIDE_KEY}`, "
            f"`{review_rules.REVIEW_REQUIRED_KEY}`, `{review_rules.REVIEW_APPROVALS_KEY}`, "
            f"`{review_rules.REVIEW_PROTECTED_LABELS_KEY}`, "
            f"`{review_rules.REVIEW_REQUIRE_EVALS_KEY}` and "
            f"`{review_rules.REVIEW_MAX_REGRESSION_KEY}`.",
            field="key",
        )
    return key
