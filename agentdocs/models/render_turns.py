"""What the renders of one day delivered, as counted on the hot path and folded here
(`agentdocs.services.render_costs`): per project, day and shape of turn (the recipe,
whether it was a process's first turn, and the block's documents with their bytes and
tokens, full or as stubs), how many turns had it.

A count derived from the renders, not a change anyone made: it keeps no history and
is not in the hash chain; a fold only ever raises `turns` to the day's count so far.
"""

from __future__ import annotations

from django.db import models

from agentdocs.models.tenancy import Project


class RenderTurns(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    # The counter's field (`render_costs.TurnShape` as JSON) and its sha256.
    shape = models.TextField()
    shape_sha256 = models.CharField(max_length=64)
    turns = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "day", "shape_sha256"], name="render_turns_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day}: {self.turns} turns"
