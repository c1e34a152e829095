"""Grouping a run's graph breaks for `gbcheck diagnose`: by id, and inside libraries by package.

A break is reported where Dynamo stopped. When that is inside an installed package, the learner needs
three more facts: which package (and version), which of their own calls led there (the entry frame) and
who can fix it: they, on their side (a config, compiling a submodule, `torch.compiler.disable` around the
region, another API of the library), or the library (upgrade, or report it upstream with a repro).
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from checker.dynamo import engine, registry

LIBRARY_ADVICE_PATH = Path(__file__).with_name("libraries.toml")
_INSTALLED = ("site-packages", "dist-packages")


@dataclass
class BreakGroup:
    """Every break of one graph-break id, over every location."""

    gb_id: str | None
    gb_type: str
    count: int  # times Dynamo reported it, over every location
    locations: list[dict[str, Any]]  # {"file", "line", "source_line", "count", "package", "entry"}
    meaning: str
    fixes: list[str]
    chapter: str
    docs: str | None  # PyTorch's programming-model section, where the course has no chapter
    page: str | None
    in_library: bool  # every location is inside the standard library or an installed package
    causes: list[dict[str, Any]] = field(default_factory=list)  # the earlier breaks behind a chained one

    @property
    def explained(self) -> bool:
        """The course has a note for it that points somewhere to read (a chapter or PyTorch's docs)."""
        return bool(self.meaning) and registry.course_note(self.gb_id) is not None and bool(self.chapter or self.docs)

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "explained": self.explained}


@dataclass
class LibraryGroup:
    """The breaks of one id inside one installed package, and what the user can do about them."""

    package: str
    version: str
    gb_id: str | None
    gb_type: str
    count: int
    places: list[str]  # "module/path.py:line" inside the package, most frequent first
    entries: list[dict[str, Any]]  # the user's frames that led there: {"file", "line", "source_line"}
    owner: str  # "you" | "library" | "torch": who usually fixes this break
    workarounds: list[str]  # on the user's side, most specific first
    upstream: str  # how to report it, when it is the library's (or torch's) to fix
    causes: list[dict[str, Any]] = field(default_factory=list)  # the breaks behind a chained one
    repro: str = ""  # the repro script written for it (--repro DIR), if any
    repro_command: str = ""  # what to run: the repro script, or the diagnose command that writes it
    repro_note: str = ""  # why none could be written

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# --- where a file belongs --------------------------------------------------------------------------

def package_of(path: str) -> tuple[str, str] | None:
    """(top-level package, path inside it) of a file in an installed package, else None."""
    parts = Path(path).parts
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] in _INSTALLED and index + 1 < len(parts):
            top = parts[index + 1]
            top = top[:-3] if top.endswith(".py") else top
            return top, "/".join(parts[index + 1:])
    return None


def in_library(path: str) -> bool:
    return package_of(path) is not None or not engine.is_user_file(path)


@lru_cache(maxsize=None)
def package_version(package: str) -> str:
    names = importlib.metadata.packages_distributions().get(package, [package])
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "?"


@lru_cache(maxsize=1)
def library_advice() -> dict[str, dict[str, Any]]:
    return tomllib.loads(LIBRARY_ADVICE_PATH.read_text(encoding="utf-8"))


# --- grouping --------------------------------------------------------------------------------------

def group_breaks(breaks: list[dict[str, Any]]) -> list[BreakGroup]:
    """Breaks (GraphBreak dicts) grouped by id: the user's own lines first, then most frequent first."""
    by_kind: dict[tuple[str | None, str], list[dict[str, Any]]] = defaultdict(list)
    for gb in breaks:
        by_kind[(gb["gb_id"], gb["gb_type"])].append(gb)
    groups = []
    for (gb_id, gb_type), found in by_kind.items():
        note = registry.course_note(gb_id)
        first = found[0]
        locations = sorted((_location(gb) for gb in found), key=lambda loc: -loc["count"])
        causes = [{"gb_id": cause[0], "gb_type": cause[1], "explanation": cause[2],
                   "chapter": _note_field(cause[0], "chapter"), "fix": _note_field(cause[0], "fix")}
                  for cause in first.get("causes", ())]
        groups.append(BreakGroup(
            gb_id=gb_id, gb_type=gb_type, count=sum(gb["count"] for gb in found), locations=locations,
            meaning=note.meaning if note else first.get("explanation", ""),
            fixes=[note.fix] if note else list(first.get("hints", [])),
            chapter=note.chapter if note else "", docs=registry.docs_url(note.docs) if note else None,
            page=registry.gb_page(gb_id), in_library=all(in_library(loc["file"]) for loc in locations),
            causes=causes))
    return sorted(groups, key=lambda group: (group.in_library, -group.count, group.gb_id or ""))


def _location(gb: dict[str, Any]) -> dict[str, Any]:
    owner = package_of(gb["filename"])
    entry_file, entry_line, entry_source = gb.get("entry") or ("", 0, "")
    return {"file": gb["filename"], "line": gb["line"], "source_line": gb["source_line"], "count": gb["count"],
            "function": gb.get("function", ""), "package": owner[0] if owner else None,
            "module_path": owner[1] if owner else None,
            "entry": {"file": entry_file, "line": entry_line, "source_line": entry_source} if entry_file else None}


def _note_field(gb_id: str | None, name: str) -> str:
    note = registry.course_note(gb_id)
    return getattr(note, name) if note else ""


def library_groups(groups: list[BreakGroup]) -> list[LibraryGroup]:
    """The in-library breaks again, by (package, id), each with the user's entry frames and advice."""
    found: dict[tuple[str, str | None], list[tuple[BreakGroup, dict[str, Any]]]] = defaultdict(list)
    for group in groups:
        for loc in group.locations:
            if loc["package"]:
                found[(loc["package"], group.gb_id)].append((group, loc))
    result = []
    for (package, gb_id), members in found.items():
        group = members[0][0]
        places = [f"{loc['module_path']}:{loc['line']}" for _, loc in sorted(members, key=lambda m: -m[1]["count"])]
        entries = []
        for _, loc in members:
            if loc["entry"] and loc["entry"] not in entries:
                entries.append(loc["entry"])
        owner, workarounds = _advice(package, gb_id)
        version = package_version(package)
        result.append(LibraryGroup(
            package=package, version=version, gb_id=gb_id, gb_type=group.gb_type,
            count=sum(loc["count"] for _, loc in members), places=places, entries=entries, owner=owner,
            workarounds=workarounds, upstream=_upstream(package, version, gb_id, group.gb_type, owner),
            causes=group.causes))
    return sorted(result, key=lambda lib: (-lib.count, lib.package, lib.gb_id or ""))


def _advice(package: str, gb_id: str | None) -> tuple[str, list[str]]:
    """Who fixes it, and the workarounds on the user's side: this package's for this id, the note's, generic."""
    advice = library_advice()
    specific = advice.get(package, {}).get(gb_id or "", {})
    note = registry.course_note(gb_id)
    owner = specific.get("owner") or (note.owner if note else "") or "library"
    workarounds = list(specific.get("workarounds", []))
    if note and note.in_library:
        workarounds.append(note.in_library)
    workarounds += advice.get(package, {}).get("any", {}).get("workarounds", [])
    workarounds += advice["any"]["any"]["workarounds"]
    return owner, list(dict.fromkeys(workarounds))


def _upstream(package: str, version: str, gb_id: str | None, gb_type: str, owner: str) -> str:
    import torch

    where = "PyTorch (the graph break is Dynamo's limitation)" if owner == "torch" else f"{package}'s issue tracker"
    return (f"First try the newest {package} and torch; if it still breaks, report it to {where} with the repro "
            f"script, naming torch {torch.__version__}, {package} {version} and {gb_id or gb_type}.")
