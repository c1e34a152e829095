"""The learner's progress: how many hints each exercise has shown and the last verdict per file content.

Kept where the course resolver says (`.gbcheck/progress.json` in a workspace or a clone), written
atomically. A verdict is remembered with the hash of the file it judged, so the overview re-checks only
files that changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from checker.course.resolver import find_course


def file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class Progress:
    def __init__(self, path: Path | None = None):
        self.path = path or find_course().progress_path
        try:
            self.data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # first run, or a damaged file: start afresh
            self.data = {}

    def _entry(self, exercise_id: str) -> dict[str, Any]:
        return self.data.setdefault(exercise_id, {})

    def hints_shown(self, exercise_id: str) -> int:
        return int(self._entry(exercise_id).get("hints_shown", 0))

    def show_hint(self, exercise_id: str) -> int:
        """Count one more hint as shown; returns the new count."""
        entry = self._entry(exercise_id)
        entry["hints_shown"] = entry.get("hints_shown", 0) + 1
        self.save()
        return entry["hints_shown"]

    def remembered_status(self, exercise_id: str, digest: str | None) -> str | None:
        entry = self._entry(exercise_id)
        return entry.get("status") if digest and entry.get("digest") == digest else None

    def remember(self, exercise_id: str, digest: str | None, status: str) -> None:
        self._entry(exercise_id).update(digest=digest, status=status)
        self.save()

    def save(self) -> None:
        write_atomically(self.path, json.dumps(self.data, indent=1, sort_keys=True).encode())


def write_atomically(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a crash or Ctrl-C mid-write leaves the old file (progress, history)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)
