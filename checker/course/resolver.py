"""Where the course lives: the one resolver every face asks for its files.

A command looks, in this order, for
1. the folder named by GBCHECK_WORKSPACE, when it is set;
2. the nearest folder at or above the working directory that is
   - a learner workspace, made by `gbcheck init` (it holds `.gbcheck/workspace.toml`), or
   - a clone of the course repository (it holds `exercises/exercises.toml`, `solutions/` and `checker/`);
3. the course packaged with the checker, read through importlib.resources.

What is graded never comes from a workspace: the manifest (entries, inputs, allowed configs) and the
reference solutions are the packaged ones, so a learner cannot edit what they are graded against. A
workspace holds only the learner's copies of the exercise files and their progress. A clone is the
course authors' own tree: its manifest, exercises and solutions are the ones being written.

The packaged course is `checker.exercises` and `checker.solutions`, two data packages that pyproject.toml
maps onto the repository's top-level `exercises/` and `solutions/` folders, so a clone, an editable
install and a wheel read the same files through the same names.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path


WORKSPACE_MARKER = Path(".gbcheck") / "workspace.toml"
BOOK_URL = "https://graph-break-course.github.io/graph-break-course/"  # the published book (see _config.yml)
MANIFEST_NAME = "exercises.toml"
CLONE, WORKSPACE, PACKAGE = "clone", "workspace", "package"


class CourseError(ValueError):
    """The course's files cannot be found or used as asked; the message says what to do."""


@dataclass(frozen=True)
class Course:
    """The folders one command works with."""

    kind: str  # CLONE, WORKSPACE or PACKAGE
    root: Path | None  # the folder the learner works in; None for the packaged course alone
    manifest_path: Path
    exercises_dir: Path  # the exercise files a learner edits (the packaged originals when there is no root)
    originals_dir: Path  # the exercise files as shipped: what `reset` restores and `verify` checks
    solutions_dir: Path
    progress_path: Path

    @property
    def editable(self) -> bool:
        """Whether exercise files here are the learner's to edit (a workspace or a clone)."""
        return self.root is not None

    @property
    def book_url(self) -> str:
        """Where chapters are read: a clone's own built book where it has one (`scripts/course.sh` builds it
        into _build/html), else the published book."""
        built = self.root / "_build" / "html" if self.kind == CLONE and self.root else None
        return built.as_uri() + "/" if built and (built / "index.html").is_file() else BOOK_URL

    def chapter_link(self, chapter: str) -> str:
        return chapter_link(chapter, self.book_url)

    def shown(self, path: str | os.PathLike) -> str:
        """`path` relative to the root when it lies inside it, else as an absolute path."""
        path = Path(path).absolute()
        if self.root is not None and path.is_relative_to(self.root):
            return str(path.relative_to(self.root))
        return str(path)

    def require_editable(self, verb: str) -> None:
        """Raise CourseError with the way out when `verb` needs exercise files to edit and there are none."""
        if not self.editable:
            command = f"gbcheck {verb}".strip()
            raise CourseError(
                f"`{command}` works on your copies of the exercises, and there is no course workspace here. "
                "Create one with `gbcheck init` (it makes ./graph-breaks), then `cd graph-breaks` and run it again.")


def chapter_link(chapter: str, book_url: str = "") -> str:
    """Where to read a chapter: its page of the book at `book_url` (default: the published book), a link
    that opens from anywhere, a workspace or a notebook outside the book included."""
    return f"{(book_url or BOOK_URL).rstrip('/')}/{chapter}.html"


def find_course(start: str | os.PathLike | None = None) -> Course:
    """The course for a command started in `start` (default: the working directory)."""
    chosen = os.environ.get("GBCHECK_WORKSPACE")
    if chosen:
        folder = Path(chosen).expanduser().absolute()
        course = _course_at(folder)
        if course is None:
            raise CourseError(f"GBCHECK_WORKSPACE is {chosen}, which is neither a course workspace "
                              "(made by `gbcheck init`) nor a clone of the course repository.")
        return course
    here = Path(start or os.getcwd()).absolute()
    for folder in (here, *here.parents):
        course = _course_at(folder)
        if course is not None:
            return course
    return packaged_course()


def packaged_course() -> Course:
    """The course as installed with the checker; read-only, with progress kept in the user's state folder."""
    exercises, solutions = packaged_exercises_dir(), packaged_solutions_dir()
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "gbcheck"
    return Course(kind=PACKAGE, root=None, manifest_path=exercises / MANIFEST_NAME, exercises_dir=exercises,
                  originals_dir=exercises, solutions_dir=solutions,
                  progress_path=_progress_path(state / "progress.json"))


def _course_at(folder: Path) -> Course | None:
    if (folder / WORKSPACE_MARKER).is_file():
        packaged = packaged_course()
        return Course(kind=WORKSPACE, root=folder, manifest_path=packaged.manifest_path,
                      exercises_dir=folder / "exercises", originals_dir=packaged.originals_dir,
                      solutions_dir=packaged.solutions_dir,
                      progress_path=_progress_path(folder / ".gbcheck" / "progress.json"))
    if (folder / "exercises" / MANIFEST_NAME).is_file() and (folder / "solutions").is_dir() \
            and (folder / "checker").is_dir():
        return Course(kind=CLONE, root=folder, manifest_path=folder / "exercises" / MANIFEST_NAME,
                      exercises_dir=folder / "exercises", originals_dir=folder / "exercises",
                      solutions_dir=folder / "solutions",
                      progress_path=_progress_path(folder / ".gbcheck" / "progress.json"))
    return None


def _progress_path(default: Path) -> Path:
    # GBCHECK_PROGRESS moves it (tests, or a learner keeping several attempts apart).
    return Path(os.environ.get("GBCHECK_PROGRESS") or default)


@lru_cache(maxsize=1)
def packaged_exercises_dir() -> Path:
    return _data_folder("checker.exercises", MANIFEST_NAME)


@lru_cache(maxsize=1)
def packaged_solutions_dir() -> Path:
    return _data_folder("checker.solutions", "01_cat_bug.py")


def _data_folder(package: str, known_file: str) -> Path:
    """The folder of a packaged data package, as a real path (trials import its files by path)."""
    try:
        path = Path(str(resources.files(package) / known_file))
    except (ModuleNotFoundError, TypeError) as err:
        raise CourseError(f"the course's files ({package}) are not installed with the checker: {err}. "
                          "Reinstall the package graph-break-course.") from err
    if not path.is_file():
        raise CourseError(f"the course's files are incomplete: {path} is missing. Reinstall graph-break-course.")
    return path.parent


# Where a clone holds the references again, besides `solutions/`: the book's notebooks (their solution cells),
# the tests' alternative fixes, a build or dist folder's copy of the package, and the git history.
_COPIES_IN_A_CLONE = (".git", "tests", "build", "dist", "_build")


def reference_copies(solutions: str | os.PathLike) -> tuple[str, ...]:
    """Every file or folder a check may not read: the reference solutions and, where they are a clone's,
    the clone's other copies of them (real paths)."""
    folder = Path(os.path.realpath(solutions))
    found = [folder]
    root = folder.parent
    if (root / "exercises" / MANIFEST_NAME).is_file() and (root / "checker").is_dir():
        found += [root / name for name in _COPIES_IN_A_CLONE if (root / name).exists()]
        found += sorted((root / "book").glob("*.ipynb"))
    return tuple(str(path) for path in found)


def course_version() -> str:
    """The installed course's version; "unknown" when it runs from a source tree that was never installed."""
    try:
        from importlib.metadata import version

        return version("graph-break-course")
    except Exception:  # noqa: BLE001 - no distribution metadata
        return "unknown"


def workspace_info(course: Course) -> dict:
    """What `gbcheck init` recorded about a workspace (the course version it was made from)."""
    if course.kind != WORKSPACE or course.root is None:
        return {}
    try:
        return tomllib.loads((course.root / WORKSPACE_MARKER).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
