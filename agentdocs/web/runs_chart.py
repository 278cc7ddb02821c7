"""The geometry of the runs timeline's chart, drawn as SVG by `agentdocs/runs.html`.

One row per bound source, one bar per segment, the runs along the x axis (1 is the
oldest run read); under them a row that marks the runs with problems. Plain numbers
and strings: the template escapes every text it draws. No script is needed to read
the chart: each bar's `<title>` says what it is, and the page lists the segments in
a table as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentdocs.core.timeline import Run, Segment

LABEL_WIDTH = 230
PLOT_WIDTH = 730
WIDTH = LABEL_WIDTH + PLOT_WIDTH + 10
AXIS_HEIGHT = 28
ROW_HEIGHT = 24
ROW_GAP = 6
PROBLEM_ROW_HEIGHT = 30
COLOURS = 6
MAX_PROBLEM_BARS = 240
LABEL_CHARACTERS = 28


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    css: str
    label: str
    title: str


@dataclass(frozen=True)
class Row:
    y: float
    label: str
    source: str
    bars: list[Bar]

    @property
    def text_y(self) -> float:
        return self.y + ROW_HEIGHT / 2 + 4


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class ProblemBar:
    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: int
    plot_right: int
    rows: list[Row]
    ticks: list[Tick]
    problem_y: float
    problem_bars: list[ProblemBar]
    runs: int

    @property
    def problem_text_y(self) -> float:
        return self.problem_y + PROBLEM_ROW_HEIGHT / 2 + 4

    @property
    def problem_base(self) -> float:
        return self.problem_y + PROBLEM_ROW_HEIGHT


def runs_label(first: int, last: int) -> str:
    return f"run {first}" if first == last else f"runs {first}–{last}"


def seen_label(segment: Segment, *, short: bool = False) -> str:
    """`v3 · 1a2b3c4d` (or `v3`), `1a2b3c4d` when unversioned, `unresolved`; a version
    read by a label says so: `v3 canary · 1a2b3c4d`."""
    sha = segment["sha256"]
    if sha is None:
        return "unresolved"
    version = f"v{segment['version']}" if segment["version"] is not None else ""
    label = segment.get("label")
    if label and not short:
        version = f"{version} {label}" if version else label
    if short:
        return version or sha[:8]
    return f"{version} · {sha[:8]}" if version else sha[:8]


def _ticks(runs: int, x_of) -> list[Tick]:
    if runs == 0:
        return []
    step = 1
    for candidate in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000):
        step = candidate
        if runs / candidate <= 10:
            break
    numbers = [1, *range(step, runs + 1, step)]
    if numbers[-1] != runs and runs - numbers[-1] >= step / 2:
        numbers.append(runs)
    # A run's number sits over the middle of its column: run n spans x_of(n)..x_of(n + 1).
    return [Tick(x=x_of(number + 0.5), label=str(number)) for number in dict.fromkeys(numbers)]


def timeline_chart(*, runs: Sequence[Run], segments: Sequence[Segment]) -> Chart:
    count = len(runs)
    per_run = PLOT_WIDTH / max(count, 1)

    def x_of(index: float) -> float:
        """The left edge of run ``index`` (from 1)."""
        return round(LABEL_WIDTH + (index - 1) * per_run, 2)

    rows: list[Row] = []
    by_source: dict[str, list[Segment]] = {}
    for segment in segments:
        by_source.setdefault(segment["source"], []).append(segment)
    y = float(AXIS_HEIGHT)
    for source, source_segments in by_source.items():
        colours: dict[tuple[int | None, str | None], int] = {}
        bars = []
        for segment in source_segments:
            seen = (segment["version"], segment["sha256"])
            colour = colours.setdefault(seen, len(colours) % COLOURS)
            left = x_of(segment["first_index"])
            width = max(round(x_of(segment["last_index"] + 1) - left, 2), 1.5)
            label = seen_label(segment) if width >= 84 else ""
            if not label and width >= 30:
                label = seen_label(segment, short=True)
            problems = segment["problem_runs"]
            bars.append(
                Bar(
                    x=left,
                    width=width,
                    css="tl-none" if segment["sha256"] is None else f"tl-c{colour}",
                    label=label,
                    title=(
                        f"{source}: {seen_label(segment)} (sha256 {segment['sha256'] or '—'}), "
                        f"{runs_label(segment['first_index'], segment['last_index'])} "
                        f"(records #{segment['first_run']}–#{segment['last_run']})"
                        + (f", {problems} with problems" if problems else "")
                    ),
                )
            )
        label = source if len(source) <= LABEL_CHARACTERS else "…" + source[-LABEL_CHARACTERS:]
        rows.append(Row(y=y, label=label, source=source, bars=bars))
        y += ROW_HEIGHT + ROW_GAP
    problem_y = y + 4
    return Chart(
        width=WIDTH,
        height=math.ceil(problem_y + PROBLEM_ROW_HEIGHT + 8),
        plot_left=LABEL_WIDTH,
        plot_right=LABEL_WIDTH + PLOT_WIDTH,
        rows=rows,
        ticks=_ticks(count, x_of),
        problem_y=problem_y,
        problem_bars=_problem_bars(runs, x_of, problem_y),
        runs=count,
    )


def _problem_bars(runs: Sequence[Run], x_of, top: float) -> list[ProblemBar]:
    """The runs with problems, in at most `MAX_PROBLEM_BARS` buckets of neighbouring
    runs; a bar's height is its bucket's number of problems against the largest."""
    count = len(runs)
    if count == 0:
        return []
    size = math.ceil(count / MAX_PROBLEM_BARS)
    buckets = []
    for start in range(0, count, size):
        chunk = runs[start : start + size]
        problems = sum(run.problem_count for run in chunk)
        if problems:
            with_problems = sum(1 for run in chunk if run.problem_count)
            buckets.append((start + 1, start + len(chunk), problems, with_problems))
    if not buckets:
        return []
    most = max(problems for _, _, problems, _ in buckets)
    bars = []
    for first, last, problems, with_problems in buckets:
        height = max(round(PROBLEM_ROW_HEIGHT * problems / most, 2), 3)
        left = x_of(first)
        bars.append(
            ProblemBar(
                x=left,
                y=round(top + PROBLEM_ROW_HEIGHT - height, 2),
                width=max(round(x_of(last + 1) - left, 2), 1.5),
                height=height,
                title=f"{runs_label(first, last)}: {problems} problem{'s' if problems != 1 else ''}"
                + (f" in {with_problems} runs" if with_problems > 1 else ""),
            )
        )
    return bars


def chart_description(*, runs: Sequence[Run], segments: Sequence[Segment]) -> str:
    """What the chart shows, in words: for its `<desc>` and for readers without it."""
    if not runs:
        return "No runs were bound in this span."
    by_source: dict[str, list[Segment]] = {}
    for segment in segments:
        by_source.setdefault(segment["source"], []).append(segment)
    changed = {source: parts for source, parts in by_source.items() if len(parts) > 1}
    sentences = [
        f"{len(runs)} run{'s' if len(runs) != 1 else ''}, records #{runs[0].id} to #{runs[-1].id}."
    ]
    if not changed:
        sentences.append("Every source stayed the same across them.")
    for source, parts in list(changed.items())[:8]:
        stretches = "; ".join(
            f"{runs_label(p['first_index'], p['last_index'])} saw {seen_label(p)}"
            for p in parts[:6]
        )
        more = f"; and {len(parts) - 6} more" if len(parts) > 6 else ""
        sentences.append(f"{source}: {stretches}{more}.")
    if len(changed) > 8:
        sentences.append(f"{len(changed) - 8} more sources changed; the table lists them.")
    with_problems = sum(1 for run in runs if run.problem_count)
    if with_problems:
        sentences.append(f"{with_problems} run{'s' if with_problems != 1 else ''} had problems.")
    return " ".join(sentences)
