from django.apps import AppConfig


class AgentdocsConfig(AppConfig):
    name = "agentdocs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from agentdocs.models import history  # noqa: F401  (connects the history signal)
        from agentdocs.services import deliveries, events

        # Webhooks: every committed event becomes a delivery to each webhook it matches.
        events.event_committed.connect(
            deliveries.event_committed_receiver, dispatch_uid="agentdocs.webhooks"
        )
