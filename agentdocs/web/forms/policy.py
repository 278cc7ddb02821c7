"""The policy pages' forms: a `memory.*` setting (set, delete) and a recipe (the form,
the JSON editor, delete)."""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms

from agentdocs.core.recipes import (
    AGENT_DOC_PARAM,
    CONTEXT_BUDGET_PARAM,
    CONTEXT_ENABLED_PARAM,
    PROFILE_CLIENT_DOC,
    ProfileOptions,
    RecipeParams,
)
from agentdocs.web.forms.fields import (
    MAX_INTEGER_DIGITS,
    JSONObjectField,
    ReasonField,
)


class SettingForm(forms.Form):
    key = forms.CharField(
        max_length=128,
        help_text="memory.… (e.g. memory.language), or security.secretOverride on the tenant",
    )
    value = forms.CharField(max_length=4096, required=False, strip=False)
    enforced = forms.BooleanField(
        required=False,
        help_text="An enforced tenant setting cannot be overridden by a project.",
    )
    reason = ReasonField()


class SettingDeleteForm(forms.Form):
    key = forms.CharField(max_length=128)


class RecipeDeleteForm(forms.Form):
    reason = ReasonField()


class RecipeForm(forms.Form):
    name = forms.CharField(max_length=64)
    params = JSONObjectField(
        help_text='For example {"agentDocument": "notes/team.md"}; "" or null turns the '
        "agent document off for this recipe.",
    )
    profiles = JSONObjectField(help_text='For example {"cli": {"useClientAgentDoc": true}}.')
    reason = ReasonField()


class RecipeEditorForm(forms.Form):
    """A recipe's params and profiles, one control each: what `RecipeForm` takes as JSON.

    Built from the stored recipe (``original``), so a key left "not set" stays not set
    when its control shows the default; the service judges the values as it judges the
    API's. Profile rows arrive as ``profile-N-name``, ``profile-N-client`` (the
    `useClientAgentDoc` switch) and ``profile-N-remove``."""

    name = forms.CharField(max_length=64)
    agent_document = forms.ChoiceField(
        choices=[
            ("default", "Default: agent.md, through the cascade"),
            ("none", "None: processes of this type get no agent notes"),
            ("path", "Another document, through the cascade"),
        ],
        initial="default",
        widget=forms.RadioSelect,
    )
    agent_document_path = forms.CharField(required=False, max_length=255)
    context_enabled = forms.BooleanField(required=False, initial=True)
    context_budget_bytes = forms.CharField(required=False, max_length=MAX_INTEGER_DIGITS)
    # Not an input: where a refusal of a profile is shown.
    profiles = forms.CharField(required=False, widget=forms.HiddenInput)
    reason = ReasonField()

    MAX_PROFILE_ROWS = 100
    _PROFILE_ROW = re.compile(r"^profile-(\d{1,3})-name$")

    @classmethod
    def initial_from(cls, *, name: str, params: RecipeParams) -> dict[str, Any]:
        if AGENT_DOC_PARAM not in params:
            agent_document, path = "default", ""
        elif not params[AGENT_DOC_PARAM]:
            agent_document, path = "none", ""
        else:
            agent_document, path = "path", params[AGENT_DOC_PARAM] or ""
        budget = params.get(CONTEXT_BUDGET_PARAM)
        return {
            "name": name,
            "agent_document": agent_document,
            "agent_document_path": path,
            "context_enabled": params.get(CONTEXT_ENABLED_PARAM, True) is not False,
            "context_budget_bytes": "" if budget is None else str(budget),
        }

    def __init__(
        self,
        *args: Any,
        original_params: RecipeParams | None = None,
        original_profiles: dict | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.original_params: RecipeParams = original_params or {}
        self.original_profiles: dict = original_profiles or {}

    def profile_rows(self) -> list[dict[str, Any]]:
        """The rows to show: what was sent (bound) or stored, and one empty row to add."""
        if self.is_bound:
            rows = [
                {"name": name, "client": client, "remove": remove}
                for name, client, remove in self._sent_profiles()
            ]
        else:
            rows = [
                {"name": name, "client": options.get(PROFILE_CLIENT_DOC) is True, "remove": False}
                for name, options in sorted(self.original_profiles.items())
            ]
        rows.append({"name": "", "client": False, "remove": False})
        return [{**row, "index": index} for index, row in enumerate(rows)]

    def _sent_profiles(self) -> list[tuple[str, bool, bool]]:
        indexes = sorted(
            int(match.group(1)) for key in self.data if (match := self._PROFILE_ROW.match(key))
        )[: self.MAX_PROFILE_ROWS]
        sent = []
        for index in indexes:
            name = str(self.data.get(f"profile-{index}-name", "")).strip()
            client = bool(self.data.get(f"profile-{index}-client"))
            remove = bool(self.data.get(f"profile-{index}-remove"))
            if name or client:
                sent.append((name, client, remove))
        return sent

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        self.cleaned_data["params"] = self._params(cleaned)
        self.cleaned_data["profiles"] = self._profiles()
        return self.cleaned_data

    def _params(self, cleaned: dict[str, Any]) -> RecipeParams:
        params: dict[str, Any] = dict(self.original_params)
        choice = cleaned.get("agent_document")
        if choice == "default":
            params.pop(AGENT_DOC_PARAM, None)
        elif choice == "none":
            # "" and null both mean off; keep whichever is stored.
            if params.get(AGENT_DOC_PARAM, "") is not None:
                params[AGENT_DOC_PARAM] = ""
        elif choice == "path":
            path = (cleaned.get("agent_document_path") or "").strip()
            if not path:
                self.add_error("agent_document_path", "Name the document, such as notes/team.md.")
            params[AGENT_DOC_PARAM] = path
        if cleaned.get("context_enabled"):
            if CONTEXT_ENABLED_PARAM in params:
                params[CONTEXT_ENABLED_PARAM] = True
        else:
            params[CONTEXT_ENABLED_PARAM] = False
        budget = (cleaned.get("context_budget_bytes") or "").strip()
        if not budget:
            params.pop(CONTEXT_BUDGET_PARAM, None)
        elif budget.isdigit():
            params[CONTEXT_BUDGET_PARAM] = int(budget)
        else:
            self.add_error("context_budget_bytes", "A whole number of bytes, such as 8192.")
        return cast(RecipeParams, params)

    def _profiles(self) -> dict[str, ProfileOptions]:
        profiles: dict[str, ProfileOptions] = {}
        for name, client, remove in self._sent_profiles():
            if remove:
                continue
            if not name:
                self.add_error("profiles", "A profile with the switch on needs a name.")
                continue
            if name in profiles:
                self.add_error("profiles", f"The profile {name} is named twice.")
                continue
            stored = self.original_profiles.get(name) or {}
            options: ProfileOptions = {}
            if client or PROFILE_CLIENT_DOC in stored:
                options[PROFILE_CLIENT_DOC] = client
            profiles[name] = options
        return profiles

    # A service's refusal names the wire field; this is the control that shows it.
    SERVICE_FIELDS = {
        f"params.{AGENT_DOC_PARAM}": "agent_document_path",
        f"params.{CONTEXT_BUDGET_PARAM}": "context_budget_bytes",
        f"params.{CONTEXT_ENABLED_PARAM}": "context_enabled",
        "name": "name",
        "reason": "reason",
    }

    def add_service_error(self, field: str | None, detail: str) -> None:
        field = field or ""
        if field in self.SERVICE_FIELDS:
            self.add_error(self.SERVICE_FIELDS[field], detail)
        elif field.startswith("profiles"):
            self.add_error("profiles", f"{field}: {detail}" if "." in field else detail)
        else:
            self.add_error(None, detail)
