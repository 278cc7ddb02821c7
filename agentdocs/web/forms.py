"""Forms parse what the browser sends; the services decide what is allowed.

Validation here is only about shape (a number is a number, JSON is JSON). Rules
about paths, bodies, secrets, keys and recipes live in the services, whose
errors the views put back beside the field they name.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, cast

from django import forms

from agentdocs.core.errors import InvalidInput
from agentdocs.core.moments import FORMS, parse_moment
from agentdocs.core.numbers import MAX_VERSION
from agentdocs.core.recipes import (
    AGENT_DOC_PARAM,
    CONTEXT_BUDGET_PARAM,
    CONTEXT_ENABLED_PARAM,
    PROFILE_CLIENT_DOC,
    ProfileOptions,
    RecipeParams,
)
from agentdocs.core.storable import MAX_DEPTH, refuse_unstorable_text
from agentdocs.selectors.bindings import TIMELINE_DEFAULT_RUNS, TIMELINE_MAX_RUNS

# No recipe value is a number this long; Python's int() refuses over 4,300 digits.
MAX_INTEGER_DIGITS = 100
REASON_HELP = "Say why, in a sentence: it is shown in the history beside your change."


def _normalise_newlines(text: str) -> str:
    # Browsers send textarea lines as CRLF; documents are stored with LF.
    return text.replace("\r\n", "\n").replace("\r", "\n")


class BodyField(forms.CharField):
    widget = forms.Textarea

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, strip=False, **kwargs)

    def clean(self, value: Any) -> str:
        return _normalise_newlines(super().clean(value))


class ReasonField(forms.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", REASON_HELP)
        super().__init__(required=False, max_length=500, **kwargs)


class _AcknowledgeField(forms.ChoiceField):
    """Offered after a check refused a save: why the text may be saved anyway.

    Not validated against its choices here: the service names a bad value."""

    reasons: list[tuple[str, str]] = []

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            required=False,
            choices=[("", "No: let me change the text"), *self.reasons],
            help_text="Save anyway, recorded in the history with your reason.",
            **kwargs,
        )

    def valid_value(self, value: Any) -> bool:
        return True


class AcknowledgeSecretField(_AcknowledgeField):
    """After the secret check refused a save."""

    reasons = [
        ("false_positive", "It is not a secret (a false positive)"),
        ("test_value", "It is a test value, not a real credential"),
    ]


class AcknowledgeHiddenField(_AcknowledgeField):
    """After a save was refused for hidden characters."""

    reasons = [("intended", "They are intended")]


class DocumentCreateForm(forms.Form):
    path = forms.CharField(
        max_length=255,
        help_text="A relative path such as agent.md, notes/team.md or .AGENTS/overview.md.",
    )
    body = BodyField()
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()


class DocumentEditForm(forms.Form):
    body = BodyField()
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
    base_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    # A protected document (`review.required`): a tenant admin saves without review.
    bypass_review = forms.BooleanField(required=False)


class MarkdownPreviewForm(forms.Form):
    body = BodyField()


class RevertForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    base_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()


class DeleteForm(forms.Form):
    base_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = ReasonField()


class LockForm(forms.Form):
    action = forms.ChoiceField(choices=[("lock", "Lock"), ("unlock", "Unlock")])
    force = forms.BooleanField(required=False)


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


class JSONObjectField(forms.CharField):
    """A JSON object typed into a textarea; parse errors name the line and column."""

    widget = forms.Textarea

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return value

    def clean(self, value: Any) -> dict[str, Any]:
        text = (super().clean(value) or "").strip()
        if not text:
            return {}
        try:
            parsed = json.loads(
                text, parse_constant=_refuse_constant, parse_int=_refuse_long_integer
            )
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                f"Not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
            ) from None
        except RecursionError:
            raise forms.ValidationError(
                f"Nested more than {MAX_DEPTH} levels deep; no recipe is shaped like that."
            ) from None
        except ValueError as error:  # a number past any limit, NaN, Infinity
            raise forms.ValidationError(f"Not a value a recipe can hold: {error}") from None
        if not isinstance(parsed, dict):
            raise forms.ValidationError("Must be a JSON object, like {}.")
        try:
            # The API's rule: no NUL, no lone surrogate (`"\ud800"`), no deep nesting.
            refuse_unstorable_text(parsed)
        except InvalidInput as error:
            raise forms.ValidationError(error.detail) from None
        return parsed


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON can store.")


def _refuse_long_integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"a number with more than {MAX_INTEGER_DIGITS} digits.")
    return int(digits)


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


class MemoryBlockPreviewForm(forms.Form):
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)
    paths = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The files a task touches, one per line: scoped .AGENTS/ documents whose "
        "globs match one are included.",
    )

    # The client's own agent file (the render API's `client_document`), to preview the
    # client layer of a profile that uses it; `validate_client_document` judges it.
    client_document_name = forms.CharField(required=False, strip=False, initial="CLAUDE.md")
    client_document_body = BodyField()

    def clean_paths(self) -> list[str]:
        """One path a line, blank lines left out; `validate_paths` judges them."""
        text = _normalise_newlines(self.cleaned_data.get("paths") or "")
        return [line.strip() for line in text.split("\n") if line.strip()]


class ExportForm(forms.Form):
    format = forms.CharField(required=False, max_length=32)
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)


class BindForm(forms.Form):
    process = forms.CharField(
        max_length=200, help_text="The id of the run being bound, as the agent knows it."
    )
    with_memory_block = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Also bind the Memory Block this run receives (its layers and text hash).",
    )
    recipe = forms.CharField(required=False, max_length=64)
    profile = forms.CharField(required=False, max_length=64)


class BindingFilterForm(forms.Form):
    process = forms.CharField(required=False, max_length=200)
    problems = forms.ChoiceField(
        required=False,
        choices=[("", "All records"), ("with", "With problems"), ("without", "Without problems")],
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_VERSION)


class BindingCompareForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)


# Three-way merge: resolving the conflicts of a stale save.
RESOLUTION_CHOICES = [
    ("theirs", "Keep their change"),
    ("yours", "Keep your change"),
    ("both", "Keep both: theirs, then yours"),
    ("edit", "Write it myself:"),
]


class MergeResolutionForm(forms.Form):
    """A stale save whose change overlaps the current version: the user's whole text
    (`body`, based on `base_version`), the version it conflicts with (`theirs_version`)
    and, per conflict, a choice (`choice_<i>`) and the text for "edit" (`text_<i>`)."""

    body = BodyField(widget=forms.Textarea(attrs={"readonly": True, "rows": 12}))
    base_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    theirs_version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = ReasonField()
    acknowledge_secret = AcknowledgeSecretField()
    acknowledge_hidden = AcknowledgeHiddenField()
    discard_theirs = forms.BooleanField(required=False)

    def __init__(self, *args: Any, conflicts: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conflict_count = conflicts
        for index in range(conflicts):
            self.fields[f"choice_{index}"] = forms.ChoiceField(
                choices=RESOLUTION_CHOICES,
                widget=forms.RadioSelect,
                error_messages={"required": f"Choose how to resolve conflict {index + 1}."},
            )
            self.fields[f"text_{index}"] = BodyField(widget=forms.Textarea(attrs={"rows": 4}))

    def resolutions(self) -> list[str]:
        """Per conflict: "theirs", "yours", "both" or the replacement text, as
        `MergeResult.resolve` takes them (a text always ends with a line end, so it is
        never mistaken for one of the words)."""
        chosen = []
        for index in range(self.conflict_count):
            choice = self.cleaned_data[f"choice_{index}"]
            if choice == "edit":
                text = self.cleaned_data[f"text_{index}"]
                choice = text if text.endswith("\n") or not text else text + "\n"
            chosen.append(choice)
        return chosen


# Change requests (issue 13).


class ChangeProposeForm(forms.Form):
    path = forms.CharField(max_length=255, widget=forms.HiddenInput)
    base_version = forms.IntegerField(min_value=1, max_value=MAX_VERSION, widget=forms.HiddenInput)
    body = BodyField()
    reason = ReasonField(help_text="Say why, in a sentence: reviewers read it first.")
    acknowledge_hidden = AcknowledgeHiddenField()


class ChangeReviewForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    comment = forms.CharField(
        max_length=10_000, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )


class ChangeCommentForm(forms.Form):
    body = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 3}))


class MomentField(forms.CharField):
    """A `since` or `until`, read as the API reads it (`agentdocs.core.moments`)."""

    def to_python(self, value: Any) -> datetime | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        moment = parse_moment(text)
        if moment is None:
            raise forms.ValidationError(f"Must be {FORMS}.", code="invalid")
        return moment


class RunsTimelineForm(forms.Form):
    """The runs page's span and window: the API's `since`, `until` and `limit`."""

    since = MomentField(required=False, help_text="ISO 8601 or a date: runs from then")
    until = MomentField(required=False, help_text="ISO 8601 or a date: runs before then")
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=TIMELINE_MAX_RUNS,
        help_text=f"The newest runs read (default {TIMELINE_DEFAULT_RUNS:,})",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "`until` must be after `since`.")
        return data
