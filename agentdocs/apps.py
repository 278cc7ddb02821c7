import functools

from django.apps import AppConfig


class AgentdocsConfig(AppConfig):
    name = "agentdocs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from simple_history.signals import (
            post_create_historical_record,
            pre_create_historical_record,
        )

        from agentdocs import links
        from agentdocs.models import history  # noqa: F401  (connects the history signal)
        from agentdocs.services import audit_chain, deliveries, events

        # Webhooks: every committed event becomes a delivery to each webhook it matches,
        # its payload's links built here, where the URL conf is known.
        events.event_committed.connect(
            functools.partial(deliveries.event_committed_receiver, data=links.event_data),
            weak=False,
            dispatch_uid="agentdocs.webhooks",
        )
        # Every history row joins its tenant's hash chain; connected after the change-type
        # receiver (models.history), whose column the link covers.
        pre_create_historical_record.connect(
            audit_chain.history_row_link, dispatch_uid="agentdocs.audit_chain"
        )
        post_create_historical_record.connect(
            audit_chain.history_row_link_after_insert, dispatch_uid="agentdocs.audit_chain.late"
        )
