"""The one-screen guideline for documents that go into every prompt.

The seed says: "Goal: one screen. A page that no one remembers will also be
skimmed by the model." Sixty lines or 4 KiB is about what a laptop shows.
"""

from __future__ import annotations

from dataclasses import dataclass

ONE_SCREEN_LINES = 60
ONE_SCREEN_BYTES = 4 * 1024


@dataclass(frozen=True)
class Measure:
    lines: int
    bytes: int

    @property
    def over_lines(self) -> bool:
        return self.lines > ONE_SCREEN_LINES

    @property
    def over_bytes(self) -> bool:
        return self.bytes > ONE_SCREEN_BYTES

    @property
    def over(self) -> bool:
        return self.over_lines or self.over_bytes

    @property
    def percent(self) -> int:
        """How full the screen is, by whichever measure is fuller (capped for the bar)."""
        fullness = max(self.lines / ONE_SCREEN_LINES, self.bytes / ONE_SCREEN_BYTES)
        return min(100, round(fullness * 100))

    max_lines = ONE_SCREEN_LINES
    max_bytes = ONE_SCREEN_BYTES


def measure(body: str) -> Measure:
    return Measure(lines=len(body.splitlines()), bytes=len(body.encode("utf-8")))
