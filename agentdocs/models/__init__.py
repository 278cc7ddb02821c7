"""The domain model, split by domain: tenancy, documents, policy, bindings, and
the history base they share. Models hold data and constraints only; every change
goes through `agentdocs.services`."""

from agentdocs.models.audit import (
    AuditChainHead,
    AuditExportRun,
    AuditVerification,
    AuditVerificationState,
)
from agentdocs.models.bindings import BindingRecord
from agentdocs.models.changes import (
    ChangeComment,
    ChangeEvals,
    ChangeRequest,
    ChangeState,
    Review,
    ReviewDecision,
)
from agentdocs.models.documents import Document
from agentdocs.models.events import Event
from agentdocs.models.history import ChangeType, HistoryChangeType, mark_change
from agentdocs.models.labels import DocumentLabel
from agentdocs.models.outcomes import Outcome
from agentdocs.models.policy import ProviderMapping, Recipe, Setting
from agentdocs.models.render_turns import RenderTurns
from agentdocs.models.repositories import Repository, RepositoryCheck
from agentdocs.models.signing import SigningKey
from agentdocs.models.skill_labels import SkillLabel
from agentdocs.models.skills import Skill
from agentdocs.models.tenancy import (
    RESERVED_PROJECT,
    Invitation,
    InvitationState,
    Membership,
    Project,
    Role,
    Tenant,
)
from agentdocs.models.tokens import ApiToken, Scope
from agentdocs.models.webhooks import Delivery, DeliveryAttempt, DeliveryState, Webhook

__all__ = [
    "RESERVED_PROJECT",
    "ApiToken",
    "AuditChainHead",
    "AuditExportRun",
    "AuditVerification",
    "AuditVerificationState",
    "BindingRecord",
    "ChangeComment",
    "ChangeEvals",
    "ChangeRequest",
    "ChangeState",
    "ChangeType",
    "Delivery",
    "DeliveryAttempt",
    "DeliveryState",
    "Document",
    "DocumentLabel",
    "Event",
    "HistoryChangeType",
    "Invitation",
    "InvitationState",
    "Membership",
    "Outcome",
    "Project",
    "ProviderMapping",
    "Recipe",
    "RenderTurns",
    "Repository",
    "RepositoryCheck",
    "Review",
    "ReviewDecision",
    "Role",
    "Scope",
    "Setting",
    "SigningKey",
    "Skill",
    "SkillLabel",
    "Tenant",
    "Webhook",
    "mark_change",
]
