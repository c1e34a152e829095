"""What a graph break means: torch's own registry plus the course's plain-language notes.

torch ships `torch/_dynamo/graph_break_registry.json` (GB id → graph-break type, explanation, hints).
The course adds `graph_breaks.toml` (beside this file): for the breaks it teaches, what the break means in one
sentence, what usually fixes it, and the book chapter to read, or, where the course has no chapter
for it yet, the section of PyTorch's torch.compile programming-model docs that covers it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from checker.dynamo import torch_support

COURSE_NOTES_PATH = Path(__file__).with_name("graph_breaks.toml")
# Public pages per GB id, the same link torch prints under a graph-break message.
GB_PAGE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{number}.html"
# Sections of PyTorch's torch.compile programming model that a note may send a reader to.
DOCS_PAGE = "https://docs.pytorch.org/docs/stable/compile/programming_model.{section}.html"
DOCS_SECTIONS = ("common_graph_breaks", "skipped_functions", "custom_ops", "dynamo_nonstrict_trace",
                 "fullgraph_false", "compiler_disable", "where_to_apply_compile", "nested_graph_breaks",
                 "observability", "reporting_issues", "recompilation", "dynamo_core_concepts",
                 "error_on_graph_break", "fullgraph_true")
OWNERS = ("you", "library", "torch")  # who usually removes the break when it happens inside a library


@dataclass(frozen=True)
class CourseNote:
    """The course's explanation of one graph-break id."""

    gb_id: str
    meaning: str  # one sentence a learner can act on
    fix: str  # the usual ways out, shortest first
    chapter: str = ""  # book page, e.g. "data-dependent"; empty where the book has none yet
    docs: str = ""  # a DOCS_SECTIONS key: PyTorch's section on it (required when there is no chapter)
    owner: str = ""  # an OWNERS value: who fixes it when it happens in a library's code
    in_library: str = ""  # what a user can do when the break is inside a library they call
    since: str = ""  # for an id newer than some supported releases: the first release whose registry has it


@lru_cache(maxsize=1)
def _torch_registry() -> dict[str, list[dict]]:
    import importlib.util

    # Found without importing torch (seconds): `gbcheck list` reads it for the manifest's variants.
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return {}
    path = Path(spec.origin).parent / "_dynamo" / "graph_break_registry.json"
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


def has_gb_id(gb_id: str) -> bool:
    """Whether the installed torch's graph-break registry knows this id ("GB7000" arrived in torch 2.11)."""
    return gb_type_for(gb_id) is not None


def gb_page(gb_id: str | None) -> str | None:
    return GB_PAGE.format(number=gb_id.removeprefix("GB")) if gb_id else None


def docs_url(section: str | None) -> str | None:
    return DOCS_PAGE.format(section=section) if section else None


@lru_cache(maxsize=1)
def course_notes() -> dict[str, CourseNote]:
    data = tomllib.loads(COURSE_NOTES_PATH.read_text(encoding="utf-8"))
    return {gb_id: CourseNote(gb_id=gb_id, **fields) for gb_id, fields in data.items()}


def course_note(gb_id: str | None) -> CourseNote | None:
    return course_notes().get(gb_id or "")
