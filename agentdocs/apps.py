from django.apps import AppConfig


class AgentdocsConfig(AppConfig):
    name = "agentdocs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from agentdocs.models import history  # noqa: F401  (connects the history signal)
