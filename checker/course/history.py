"""Every version of an exercise file that was checked, kept so that no work is ever lost.

    .gbcheck/history/<exercise id>/index.json   one entry per version: number, time, digest, verdict
    .gbcheck/history/<exercise id>/<n>.py       the file as it was checked

A version is kept before its check runs (a crash or Ctrl-C during the check loses nothing), and only
when it differs from the last one kept. `gbcheck reset` and `gbcheck history ID --restore N` keep the
file they replace first, so they can be undone the same way. The grader writes here, never the
checked process (its writes are confined to a scratch folder: grading/confine.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from checker.course.progress import write_atomically
from checker.course.resolver import Course, CourseError, find_course


@dataclass(frozen=True)
class Version:
    number: int
    saved: str  # UTC, ISO 8601, to the second
    digest: str
    status: str  # the check's verdict; "" while it runs, or when it never finished
    lines: int
    path: Path


class History:
    def __init__(self, course: Course | None = None):
        self.root = (course or find_course()).progress_path.parent / "history"

    def versions(self, exercise_id: str) -> list[Version]:
        folder = self.root / exercise_id
        return [Version(number=e["n"], saved=e["saved"], digest=e["digest"], status=e.get("status", ""),
                        lines=e.get("lines", 0), path=folder / f"{e['n']}.py") for e in self._index(exercise_id)]

    def keep(self, exercise_id: str, path: Path) -> Version | None:
        """Keep `path`'s content as the next version (unless it is the last one kept); None if unreadable."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        index = self._index(exercise_id)
        if index and index[-1]["digest"] == digest:
            return self.versions(exercise_id)[-1]
        number = index[-1]["n"] + 1 if index else 1
        folder = self.root / exercise_id
        write_atomically(folder / f"{number}.py", data)
        index.append({"n": number, "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "digest": digest, "status": "", "lines": data.count(b"\n")})
        self._save_index(exercise_id, index)
        return self.versions(exercise_id)[-1]

    def record_verdict(self, exercise_id: str, version: Version | None, status: str) -> None:
        if version is None:
            return
        index = self._index(exercise_id)
        for entry in index:
            if entry["n"] == version.number:
                entry["status"] = status
        self._save_index(exercise_id, index)

    def version(self, exercise_id: str, number: int) -> Version:
        found = [v for v in self.versions(exercise_id) if v.number == number]
        if not found:
            kept = self.versions(exercise_id)
            span = f"versions 1 to {kept[-1].number}" if kept else "no versions yet"
            raise CourseError(f"{exercise_id} has no version {number} in its history ({span}): "
                              f"see gbcheck history {exercise_id}")
        return found[0]

    def restore(self, exercise_id: str, number: int, target: Path) -> Version:
        """Put version `number` back at `target`, keeping what is there now as a version first."""
        chosen = self.version(exercise_id, number)
        if target.exists():
            self.keep(exercise_id, target)
        write_atomically(target, chosen.path.read_bytes())
        return chosen

    def _index(self, exercise_id: str) -> list[dict]:
        try:
            entries = json.loads((self.root / exercise_id / "index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [e for e in entries if isinstance(e, dict) and {"n", "saved", "digest"} <= e.keys()]

    def _save_index(self, exercise_id: str, index: list[dict]) -> None:
        write_atomically(self.root / exercise_id / "index.json", json.dumps(index, indent=1).encode())

