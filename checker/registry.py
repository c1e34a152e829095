"""What a graph break means: torch's own registry plus the course's plain-language notes.

torch ships `torch/_dynamo/graph_break_registry.json` (GB id → graph-break type, explanation, hints).
The course adds `checker/graph_breaks.toml`: for the breaks it teaches, what the break means in one
sentence, what usually fixes it, and the book chapter to read.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from checker import torch_support

COURSE_NOTES_PATH = Path(__file__).with_name("graph_breaks.toml")
# Public pages per GB id, the same link torch prints under a graph-break message.
GB_PAGE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{number}.html"


@dataclass(frozen=True)
class CourseNote:
    """The course's explanation of one graph-break id."""

    gb_id: str
    meaning: str  # one sentence a learner can act on
    fix: str  # the usual ways out, shortest first
    chapter: str  # book page, e.g. "data-dependent"


@lru_cache(maxsize=1)
def _torch_registry() -> dict[str, list[dict]]:
    import torch._dynamo

    path = Path(torch._dynamo.__file__).with_name("graph_break_registry.json")
    try:
        return torch_support.repaired_registry(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):  # an older torch without the registry: ids are then unknown
        return {}


@lru_cache(maxsize=1)
def _gb_type_to_id() -> dict[str, str]:
    return {entry["Gb_type"]: gb_id for gb_id, entries in _torch_registry().items() for entry in entries}


def gb_id_for(gb_type: str | None) -> str | None:
    """The registry id ("GB0170") of a graph-break type, or None if torch does not list it."""
    return _gb_type_to_id().get(gb_type or "")


def gb_type_for(gb_id: str) -> str | None:
    """The graph-break type torch registers under this id."""
    entries = _torch_registry().get(gb_id)
    return entries[0]["Gb_type"] if entries else None


def gb_page(gb_id: str | None) -> str | None:
    return GB_PAGE.format(number=gb_id.removeprefix("GB")) if gb_id else None


@lru_cache(maxsize=1)
def course_notes() -> dict[str, CourseNote]:
    data = tomllib.loads(COURSE_NOTES_PATH.read_text(encoding="utf-8"))
    return {gb_id: CourseNote(gb_id=gb_id, **fields) for gb_id, fields in data.items()}


def course_note(gb_id: str | None) -> CourseNote | None:
    return course_notes().get(gb_id or "")
