"""Domain errors. Services raise these; the API and the pages turn them into
responses. Each carries a stable code, a sentence for people and the field the
problem is in (or None)."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict, cast

from agentdocs.core.merge import ConflictData, MergeResult
from agentdocs.core.shapes import Doc


class HiddenCharacterData(TypedDict):
    """One hidden character as a refusal's body lists it."""

    line: int
    column: int
    code_point: Annotated[str, Doc("U+202E")]
    name: Annotated[str, Doc("RIGHT-TO-LEFT OVERRIDE")]


class LockState(TypedDict):
    """A live edit lock as plain data."""

    holder: Annotated[str | None, Doc("The holder's username.")]
    expires_at: Annotated[str, Doc("When the lock expires (ISO 8601).")]


class ErrorBody(TypedDict):
    """The body of every API error: its code, a sentence for people, the field the
    problem is in, and the further facts some errors carry (each optional key says
    which). The API's schema is generated from this declaration
    (`agentdocs.api.schema.ERROR_RESPONSES`); `AgentdocsError.extra` may hold only
    these keys (tests/api/test_schema_shapes.py reads every raise to check it)."""

    error: Annotated[str, Doc("A stable code: what went wrong.")]
    detail: Annotated[str, Doc("A sentence for people: what went wrong and what to do.")]
    field: Annotated[
        str | None, Doc("The field the problem is in (dotted for a nested one), or null.")
    ]
    required_scope: NotRequired[
        Annotated[str, Doc("With `insufficient_scope`: the scope this request needs.")]
    ]
    current_version: NotRequired[
        Annotated[
            int | None,
            Doc(
                "With `version_conflict` and `merge_conflict`: the document's version now "
                "(null when it was deleted); with `already_exists` and `not_found` of a "
                "document: its current version, where it has one."
            ),
        ]
    ]
    base_version: NotRequired[
        Annotated[
            int,
            Doc(
                "With `version_conflict` and `merge_conflict`: the version the write was based on."
            ),
        ]
    ]
    conflicts: NotRequired[
        Annotated[
            list[ConflictData],
            Doc("With `merge_conflict`: each overlap, in the base, `theirs` and `yours`."),
        ]
    ]
    line: NotRequired[
        Annotated[
            int,
            Doc(
                "With `secret_detected`: the line the secret is on; with "
                "`hidden_characters`: the line of the first hidden character."
            ),
        ]
    ]
    column: NotRequired[Annotated[int, Doc("With `hidden_characters`: the first one's column.")]]
    count: NotRequired[Annotated[int, Doc("With `hidden_characters`: how many the text holds.")]]
    characters: NotRequired[
        Annotated[
            list[HiddenCharacterData] | list[str],
            Doc(
                "With `hidden_characters`: each one (the first 50), where and which; with "
                "`invalid_path` and `confusable_path`: the characters blamed, as labels."
            ),
        ]
    ]
    source: NotRequired[
        Annotated[str, Doc("On an import: the repository file the secret or character is in.")]
    ]
    lock: NotRequired[Annotated[LockState, Doc("With `locked`: who holds the lock, until when.")]]
    retry_after: NotRequired[
        Annotated[int, Doc("With `rate_limited`: seconds to wait; also the Retry-After header.")]
    ]
    propose_url: NotRequired[
        Annotated[str, Doc("With `review_required`: where to propose the change instead.")]
    ]
    state: NotRequired[
        Annotated[str, Doc("With `change_closed`: the change request's state (merged, ...).")]
    ]
    approvals: NotRequired[
        Annotated[int, Doc("With `not_approved`: the approvals the change request has.")]
    ]
    approvals_required: NotRequired[
        Annotated[int, Doc("With `not_approved`: the approvals it needs to be merged.")]
    ]
    regression: NotRequired[
        Annotated[
            float | None,
            Doc(
                "With `evals_missing` (null) and `evals_regressed`: how much worse the "
                "proposed text did than the base in the change's latest evals."
            ),
        ]
    ]
    max_regression: NotRequired[
        Annotated[
            float,
            Doc("With `evals_missing` and `evals_regressed`: `review.maxRegression` in force."),
        ]
    ]
    limit: NotRequired[
        Annotated[
            int,
            Doc(
                "With `too_large`: the cap in bytes; with `too_many_tokens`, "
                "`too_many_webhooks` and `too_many_labels`: how many one may hold; with "
                "`invalid` of a repository report's `files`: how many files, or bytes a "
                "path, it may hold."
            ),
        ]
    ]
    size: NotRequired[Annotated[int, Doc("With `too_large` of an export: its size in bytes.")]]
    bytes: NotRequired[
        Annotated[int, Doc("With `too_large` of a binding record: its size in bytes.")]
    ]


class AgentdocsError(Exception):
    """``extra`` holds further JSON-serialisable facts the error body carries
    (``current_version`` of a conflict)."""

    code = "error"
    status = 400

    def __init__(self, detail: str, *, field: str | None = None, **extra: object) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.extra = extra

    def as_dict(self) -> ErrorBody:
        # `extra` holds only `ErrorBody`'s optional keys (checked by a test of every raise).
        return cast(
            ErrorBody,
            {"error": self.code, "detail": self.detail, "field": self.field, **self.extra},
        )


class InvalidInput(AgentdocsError):
    code = "invalid"
    status = 400


class InvalidPath(InvalidInput):
    """A new path or name holds an invisible or control character: a file name a
    reader sees one way and a model or a file system reads another."""

    code = "invalid_path"


class ConfusablePath(InvalidInput):
    """A new path or name can be mistaken for another (UTS #39: mixed scripts in a
    word, a whole word of look-alikes, compatibility forms such as fullwidth letters)."""

    code = "confusable_path"


class InvalidRemote(InvalidInput):
    """A git remote that cannot be read: a port that is not a number from 1 to 65535, a
    host that is none (empty, a space in it, a broken IPv6 literal)."""

    code = "invalid_remote"


class NotFound(AgentdocsError):
    code = "not_found"
    status = 404


class Forbidden(AgentdocsError):
    code = "forbidden"
    status = 403


class ChangeForbidden(Forbidden):
    """A member may read what they asked to change, but their role does not let them
    change it (every member reads the whole tenant)."""


class AdminOnly(Forbidden):
    """Reserved to tenant admins: what is refused may be something the member cannot
    even read (the webhooks, the members), so nothing is said of reading."""


class InsufficientScope(Forbidden):
    """An API token's scopes, tenant or expiry do not reach what the request asks."""

    code = "insufficient_scope"


class AlreadyExists(AgentdocsError):
    code = "already_exists"
    status = 409


class Enforced(AgentdocsError):
    """A project tried to set what its tenant enforces."""

    code = "enforced"
    status = 409


class TooManyTokens(AgentdocsError):
    """The user holds as many active API tokens as one person may."""

    code = "too_many_tokens"
    status = 409


class TooManyWebhooks(AgentdocsError):
    """The tenant has `AGENTDOCS_MAX_WEBHOOKS_PER_TENANT` webhooks: each one costs every
    write of the tenant a delivery."""

    code = "too_many_webhooks"
    status = 409


class TooManyLabels(AgentdocsError):
    """The document carries `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels: each one is a
    row of its labels list and a name renders may read by."""

    code = "too_many_labels"
    status = 409


class VersionRequired(AgentdocsError):
    code = "version_required"
    status = 428


class VersionConflict(AgentdocsError):
    """The write was based on a version that is no longer current."""

    code = "version_conflict"
    status = 412

    def __init__(
        self,
        *,
        base_version: int,
        current_version: int | None,
        detail: str | None = None,
        **extra: object,
    ) -> None:
        current = "deleted" if current_version is None else f"version {current_version}"
        super().__init__(
            detail
            or f"The document changed since version {base_version}; it is now at {current}. "
            "Nothing was written: fetch the current version and apply your change to it.",
            field="version",
            current_version=current_version,
            **extra,
        )
        self.current_version = current_version


class MergeConflict(AgentdocsError):
    """A stale write asked to be merged, and both sides changed the same lines.

    The body carries ``conflicts`` (`MergeResult.conflicts_data()`); ``result`` keeps
    the whole merge for a page that lets a person resolve it."""

    code = "merge_conflict"
    status = 409

    def __init__(
        self,
        *,
        result: MergeResult,
        base_version: int,
        current_version: int,
        detail: str | None = None,
    ) -> None:
        count = len(result.conflicts)
        super().__init__(
            detail
            or f"Your change (based on version {base_version}) and version {current_version} "
            f"change the same lines in {count} place{'s' if count != 1 else ''}. Nothing "
            "was written: resolve each conflict and save again based on version "
            f"{current_version}.",
            field="body",
            conflicts=result.conflicts_data(),
            base_version=base_version,
            current_version=current_version,
        )
        self.result = result
        self.base_version = base_version
        self.current_version = current_version


class SkillMergeConflict(AgentdocsError):
    """A stale write of a skill asked to be merged, and both sides changed the same
    lines of a file (or one removed a file the other changed): the documents' 409
    `merge_conflict`, each conflict naming its file (``path``), ``field`` the first."""

    code = "merge_conflict"
    status = 409

    def __init__(
        self,
        *,
        conflicts: list[ConflictData],
        base_version: int,
        current_version: int,
        detail: str | None = None,
    ) -> None:
        """``detail`` replaces the message; its ``{files}`` is the files in conflict."""
        paths = sorted({conflict.get("path", "") for conflict in conflicts})
        count = len(conflicts)
        files = ", ".join(f"`{p}`" for p in paths)
        super().__init__(
            detail.format(files=files)
            if detail
            else f"Your change (based on version {base_version}) and version {current_version} "
            f"change the same lines in {count} place{'s' if count != 1 else ''} "
            f"({files}). Nothing was written: resolve each "
            f"conflict and save again based on version {current_version}.",
            field=f"files/{paths[0]}",
            conflicts=conflicts,
            base_version=base_version,
            current_version=current_version,
        )


class Locked(AgentdocsError):
    code = "locked"
    status = 423


class SecretDetected(AgentdocsError):
    code = "secret_detected"
    status = 422


class HiddenCharacters(AgentdocsError):
    """The text holds characters a reader cannot see but a model reads (bidi controls,
    zero-width or tag characters: `core.hidden_characters`). The body names the first
    one's ``line`` and ``column``, the ``count`` of all and the first of them as
    ``characters``."""

    code = "hidden_characters"
    status = 422


class TooLarge(AgentdocsError):
    """What the request would store is over a configured size cap; nothing was stored.
    The code is the one the API gives a request body over the server's limit."""

    code = "too_large"
    status = 413


class Unprocessable(AgentdocsError):
    code = "unprocessable"
    status = 422


class RateLimited(AgentdocsError):
    """Too many requests of one kind from one caller; ``retry_after`` says when to retry."""

    code = "rate_limited"
    status = 429

    def __init__(self, detail: str, *, retry_after: int, field: str | None = None) -> None:
        super().__init__(detail, field=field, retry_after=retry_after)
        self.retry_after = retry_after


# Change review (issue 13).


class ReviewRequired(AgentdocsError):
    """A direct write to a protected path: propose a change instead. The answer's
    ``propose_url`` is built by the face that knows the URL conf, from the ``tenant``
    and ``project`` slugs (`agentdocs.links.propose_url`)."""

    code = "review_required"
    status = 409

    def __init__(self, detail: str, *, field: str | None = None, tenant: str, project: str) -> None:
        super().__init__(detail, field=field)
        self.tenant = tenant
        self.project = project


class OwnChange(AgentdocsError):
    """Nobody reviews their own change request."""

    code = "own_change"
    status = 409


class ChangeClosed(AgentdocsError):
    """The change request was merged, rejected or withdrawn: it no longer changes."""

    code = "change_closed"
    status = 409


class NotApproved(AgentdocsError):
    """The change request lacks the approvals it needs to be merged."""

    code = "not_approved"
    status = 409


class EvalsMissing(AgentdocsError):
    """`review.requireEvals`: the change request has no eval results yet."""

    code = "evals_missing"
    status = 409


class EvalsRegressed(AgentdocsError):
    """`review.requireEvals`: the change's latest evals find the proposed text worse
    than the base beyond `review.maxRegression`."""

    code = "evals_regressed"
    status = 409


class ExportNotReady(AgentdocsError):
    """An export's file was asked for before its task finished writing it (or it failed)."""

    code = "export_not_ready"
    status = 409


class InvalidSkill(Unprocessable):
    """A skill that breaks the Agent Skills specification (its `SKILL.md` frontmatter,
    its name, its layout): ``field`` names the file, and the frontmatter field after
    `#` (`files/SKILL.md#name`)."""

    code = "invalid_skill"


class BinaryFile(Unprocessable):
    """A skill's bundled file is not text (a NUL or control bytes, or a binary type
    such as `.png`): skills bundle text files only."""

    code = "binary_file"
