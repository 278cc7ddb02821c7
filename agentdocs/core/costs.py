"""What the Memory Block costs: its text read back as the documents it carries, and the
turns of many processes added up (tokens delivered, and what the per-process dedup
saved against sending every layer in full on every turn).

A block's text names its parts itself: each layer opens with its heading (documents
cannot forge one: `agentdocs.core.block_structure`), an agent notes heading names the
document, and each `.AGENTS/` source is wrapped in `<context path="...">`. So a
delivered text, as a binding record's `delivery` keeps it word for word, is split
here into pieces, one per document (plus the layers' own lines, and any line the
delivery added), each counted in bytes and tokens (`agentdocs.core.token_count`).

A layer a process already holds is sent as a stub. Against what does the stub save?
Against the layer's text the same process last received in full (which is what it
holds), or, when that turn is not among the records read, the layer as the block
renders it now (``fallback``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from agentdocs.core.layer_headings import AGENT_NOTES_PREFIX, CONTEXT_HEADING, POLICY_HEADING
from agentdocs.core.memory_block import UNCHANGED_STUBS
from agentdocs.core.skill_index import SKILLS_HEADING
from agentdocs.core.token_count import count_tokens

# The names of the pieces that are not a stored document of the project.
POLICY = "memory.* settings"
CONTEXT_LAYER = ".AGENTS/ (the layer's own lines)"
SKILLS = "skills index"
OTHER = "(lines the delivery added)"

FULL = "full"
STUB = "stub"

# Like `hook_delivery.block_layers`, with the skills index's heading too: a layer opens
# at the start of the text or after the blank line that joins two layers.
_HEADING = re.compile(
    r"^(?:"
    + "|".join(re.escape(h) for h in (POLICY_HEADING, CONTEXT_HEADING, SKILLS_HEADING))
    + "|"
    + re.escape(AGENT_NOTES_PREFIX)
    + r"[^\n]*\))$",
    re.MULTILINE,
)
_SOURCE = re.compile(r'^<context path="([^"\n]*)">\n.*?\n</context>$', re.MULTILINE | re.DOTALL)
_STUB_SENTENCES = frozenset(UNCHANGED_STUBS.values())


@dataclass(frozen=True)
class Piece:
    """One document's part of a delivered text (or a layer's own lines)."""

    name: str
    bytes: int
    tokens: int

    @classmethod
    def of(cls, name: str, text: str) -> Piece:
        return cls(name=name, bytes=len(text.encode("utf-8")), tokens=count_tokens(text))


@dataclass(frozen=True)
class Layer:
    """One layer of a delivered text: its heading (the key a process's dedup goes by),
    whether it was sent in full or as a stub, and its pieces."""

    heading: str
    state: str
    pieces: tuple[Piece, ...]


def agent_notes_document(heading: str) -> str:
    """The document an agent notes heading names: `agent.md` for the project's own,
    `_vance/agent.md` for the tenant's, `default: agent.md`, `client: CLAUDE.md`."""
    inner = heading[len(AGENT_NOTES_PREFIX) : -1]
    for prefix, name in (
        ("from _vance: ", "_vance/"),
        ("system default: ", "default: "),
        ("from client: ", "client: "),
    ):
        if inner.startswith(prefix):
            return name + inner[len(prefix) :]
    return inner


def _layer(text: str) -> Layer:
    heading = text.split("\n", 1)[0]
    rest = text[len(heading) :].strip("\n")
    if rest in _STUB_SENTENCES:
        owner = {
            POLICY_HEADING: POLICY,
            CONTEXT_HEADING: CONTEXT_LAYER,
            SKILLS_HEADING: SKILLS,
        }.get(heading) or agent_notes_document(heading)
        return Layer(heading, STUB, (Piece.of(owner, text),))
    if heading == POLICY_HEADING:
        return Layer(heading, FULL, (Piece.of(POLICY, text),))
    if heading == SKILLS_HEADING:
        return Layer(heading, FULL, (Piece.of(SKILLS, text),))
    if heading != CONTEXT_HEADING:
        return Layer(heading, FULL, (Piece.of(agent_notes_document(heading), text),))
    pieces: list[Piece] = []
    own: list[str] = []
    position = 0
    for match in _SOURCE.finditer(text):
        own.append(text[position : match.start()])
        pieces.append(Piece.of(match.group(1), match.group(0)))
        position = match.end()
    own.append(text[position:])
    return Layer(heading, FULL, (Piece.of(CONTEXT_LAYER, "".join(own)), *pieces))


def delivered_layers(text: str) -> tuple[tuple[Layer, ...], Piece | None]:
    """``text`` (a block as delivered) as its layers, and what stands before the first
    one (a line the delivery added, or a text that is not a block), if anything."""
    starts = [
        match.start()
        for match in _HEADING.finditer(text)
        if match.start() == 0 or text.startswith("\n\n", match.start() - 2)
    ]
    if not starts:
        return (), Piece.of(OTHER, text) if text.strip() else None
    before = Piece.of(OTHER, text[: starts[0]]) if text[: starts[0]].strip() else None
    ends = [start - 2 for start in starts[1:]] + [len(text.rstrip("\n"))]
    layers = tuple(_layer(text[start:end]) for start, end in zip(starts, ends, strict=True))
    return layers, before


class DocumentCost(TypedDict):
    """One document's part of the turns read."""

    document: str
    turns_full: int
    turns_stub: int
    bytes_delivered: int
    tokens_delivered: int
    tokens_if_full: int
    tokens_saved: int


class WindowTotals(TypedDict):
    processes: int
    turns: int
    bytes_delivered: int
    tokens_delivered: int
    tokens_if_full: int
    tokens_saved: int


@dataclass
class _Tally:
    turns_full: int = 0
    turns_stub: int = 0
    bytes_delivered: int = 0
    tokens_delivered: int = 0
    tokens_if_full: int = 0


@dataclass
class TurnCosts:
    """The turns read, added up; `add_turn` them in order of time within each process."""

    fallback: Mapping[str, tuple[Piece, ...]] = field(default_factory=dict)
    _documents: dict[str, _Tally] = field(default_factory=dict)
    _held: dict[tuple[str, str], tuple[Piece, ...]] = field(default_factory=dict)
    _processes: set[str] = field(default_factory=set)
    _counted_processes: int = 0
    _turns: int = 0
    # Texts read back already: most turns deliver a text some other turn did.
    _read: dict[str, tuple[tuple[Layer, ...], Piece | None]] = field(default_factory=dict)

    def _tally(self, name: str) -> _Tally:
        tally = self._documents.get(name)
        if tally is None:
            tally = self._documents[name] = _Tally()
        return tally

    def add_turn(self, *, process: str, text: str) -> None:
        """One delivered text of ``process``."""
        self._processes.add(process)
        self._turns += 1
        read = self._read.get(text)
        if read is None:
            read = self._read[text] = delivered_layers(text)
        layers, before = read
        if before is not None:
            self._sent(before)
        for layer in layers:
            key = (process, layer.heading)
            if layer.state == FULL:
                self._held[key] = layer.pieces
                for piece in layer.pieces:
                    self._sent(piece)
                continue
            (stub,) = layer.pieces
            held = self._held.get(key) or self.fallback.get(layer.heading) or (stub,)
            tally = self._tally(stub.name)
            tally.turns_stub += 1
            tally.bytes_delivered += stub.bytes
            tally.tokens_delivered += stub.tokens
            for piece in held:
                self._tally(piece.name).tokens_if_full += piece.tokens
                if piece.name != stub.name:
                    self._tally(piece.name).turns_stub += 1

    def add_counted(self, *, layers: Sequence[Layer], turns: int, first: int) -> None:
        """``turns`` turns that each delivered ``layers`` (`counted_layers`), ``first``
        of them a process's first; a stub is held against ``fallback`` (the counts do
        not say which process held what)."""
        self._counted_processes += first
        self._turns += turns
        for layer in layers:
            if layer.state == FULL:
                for piece in layer.pieces:
                    self._sent(piece, turns)
                continue
            (stub,) = layer.pieces
            held = self.fallback.get(layer.heading) or (stub,)
            tally = self._tally(stub.name)
            tally.turns_stub += turns
            tally.bytes_delivered += stub.bytes * turns
            tally.tokens_delivered += stub.tokens * turns
            for piece in held:
                self._tally(piece.name).tokens_if_full += piece.tokens * turns
                if piece.name != stub.name:
                    self._tally(piece.name).turns_stub += turns

    def _sent(self, piece: Piece, turns: int = 1) -> None:
        tally = self._tally(piece.name)
        tally.turns_full += turns
        tally.bytes_delivered += piece.bytes * turns
        tally.tokens_delivered += piece.tokens * turns
        tally.tokens_if_full += piece.tokens * turns

    def documents(self) -> list[DocumentCost]:
        """Per document, most tokens delivered first."""
        rows: list[DocumentCost] = [
            {
                "document": name,
                "turns_full": tally.turns_full,
                "turns_stub": tally.turns_stub,
                "bytes_delivered": tally.bytes_delivered,
                "tokens_delivered": tally.tokens_delivered,
                "tokens_if_full": tally.tokens_if_full,
                "tokens_saved": tally.tokens_if_full - tally.tokens_delivered,
            }
            for name, tally in self._documents.items()
        ]
        return sorted(rows, key=lambda row: (-row["tokens_delivered"], row["document"]))

    def totals(self) -> WindowTotals:
        tallies = self._documents.values()
        delivered = sum(t.tokens_delivered for t in tallies)
        if_full = sum(t.tokens_if_full for t in tallies)
        return {
            "processes": len(self._processes) + self._counted_processes,
            "turns": self._turns,
            "bytes_delivered": sum(t.bytes_delivered for t in tallies),
            "tokens_delivered": delivered,
            "tokens_if_full": if_full,
            "tokens_saved": if_full - delivered,
        }


class TextCost(TypedDict):
    bytes: int
    tokens: int


def text_cost(text: str) -> TextCost:
    return {"bytes": len(text.encode("utf-8")), "tokens": count_tokens(text)}


def held_layers(text: str) -> dict[str, tuple[Piece, ...]]:
    """A full block's layers by heading: what a stub of each stands for (``fallback``)."""
    layers, _ = delivered_layers(text)
    return {layer.heading: layer.pieces for layer in layers if layer.state == FULL}


def pieces_of(texts: Iterable[str]) -> dict[str, Piece]:
    """Each document's piece in full blocks ``texts`` (the first block naming it wins)."""
    found: dict[str, Piece] = {}
    for text in texts:
        for pieces in held_layers(text).values():
            for piece in pieces:
                found.setdefault(piece.name, piece)
    return found


# A turn as the render counts it (`agentdocs.services.render_costs`): its layers, each
# [heading, state, [[document, bytes, tokens], ...]], what stood before them a layer
# of heading "".
ShapeLayer = tuple[str, str, list[tuple[str, int, int]]]


def turn_layers(text: str) -> list[ShapeLayer]:
    """A delivered text's layers as plain lists, for a counter's field."""
    layers, before = delivered_layers(text)
    found: list[ShapeLayer] = []
    if before is not None:
        found.append(("", FULL, [(before.name, before.bytes, before.tokens)]))
    for layer in layers:
        pieces = [(piece.name, piece.bytes, piece.tokens) for piece in layer.pieces]
        found.append((layer.heading, layer.state, pieces))
    return found


def counted_layers(shape: object) -> tuple[Layer, ...]:
    """`turn_layers` read back from JSON; () for what is not one."""
    try:
        return tuple(
            Layer(
                str(heading), str(state), tuple(Piece(str(n), int(b), int(t)) for n, b, t in pieces)
            )
            for heading, state, pieces in shape  # type: ignore[attr-defined]
        )
    except (TypeError, ValueError):
        return ()
