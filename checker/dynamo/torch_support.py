"""Which torch releases the checker supports, and every difference between them, found by feature detection.

The supported range is declared once, here (pyproject's `dependencies` repeats it; a test keeps the two
equal). It is the only place a version number is read: everything that differs between releases is
found by looking at what the installed torch has, never by parsing its version:

- config names: `ignore_logging_functions` was `ignore_logger_methods` before torch 2.11 (2.11 keeps the
  old name as an alias), see `config_name` and `has_feature` (which the manifest's variants use);
- where Dynamo reports a graph break: `InstructionTranslatorBase.log_graph_break(self, code_options, reason,
  exc)` from 2.11 on, the same method without the exception (`user_stack=`) in 2.10, and a module-level
  `symbolic_convert.log_graph_break(code_options, reason, exc_info, user_stack)` before that;
- how a break's type reaches us: the exception's `gb_type` attribute from 2.11 on; before, only the
  arguments of `format_graph_break_message`, which every release formats its messages with;
- bookkeeping the engine skips (`profile_guard_manager`, `record_compilation_metrics`), where it exists.

This module imports torch only inside functions: `check_supported` runs before anything imports torch.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

OLDEST = (2, 8)  # the oldest release the checker is tested on (see scripts/compat.sh)
NEWEST = (2, 15)  # the newest one
REQUIREMENT = f"torch>={OLDEST[0]}.{OLDEST[1]},<{NEWEST[0]}.{NEWEST[1] + 1}"  # as in pyproject.toml


def torch_version() -> str | None:
    """The installed torch's version as pip recorded it, without importing torch; None if not installed."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def check_supported(version: str | None = ...) -> str | None:  # type: ignore[assignment]
    """None when the installed torch (or `version`) is in the supported range; else one sentence saying so."""
    version = torch_version() if version is ... else version
    wanted = f"torch {OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]}"
    fix = f'install a supported release, for example with: pip install "{REQUIREMENT}"'
    if version is None:
        return f"gbcheck needs {wanted}, and torch is not installed in this Python ({sys.executable}): {fix}."
    try:
        supported = OLDEST <= _release(version) <= NEWEST
    except ValueError:
        supported = False
    if not supported:
        return f"gbcheck needs {wanted}, but this Python has torch {version}: {fix}."
    return _missing_dependency()


def _missing_dependency() -> str | None:
    """One sentence for a package the course declares that this Python lacks (an install with --no-deps, say);
    without it, an exercise's reference fails deep inside a check."""
    import importlib.util

    try:
        found = importlib.util.find_spec("numpy") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else (f"gbcheck needs numpy, which is not installed in this Python ({sys.executable}): "
                               "pip install numpy")


def torch_before(release: str) -> bool:
    """Whether the installed torch is older than `release` ("2.9"): for the manifest's measured differences."""
    return _release(torch_version() or "0.0") < _release(release)


def _release(version: str) -> tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        raise ValueError(f"not a torch release: {version!r}")
    return int(found[1]), int(found[2])


# --- names that differ between releases -------------------------------------------------------------

@lru_cache(maxsize=None)
def has_feature(dotted: str) -> bool:
    """Whether the installed torch has this attribute, e.g. "torch._dynamo.config.ignore_logging_functions".

    Remembered on disk per torch installation (see `_FeatureCache`): finding out imports torch, seconds
    that `gbcheck list` and the overview would otherwise spend on every run."""
    cache = _FeatureCache()
    known = cache.get(dotted)
    if known is None:
        known = _look_for_feature(dotted)
        cache.put(dotted, known)
    return known


class _FeatureCache:
    """`has_feature`'s answers, in the user's cache folder, per torch installation: its version and its
    dist-info folder (path and time, which a reinstall changes), so that several venvs share the file.
    Unreadable or unwritable: no cache."""

    _KEPT = 8  # installations remembered; the oldest is forgotten first

    def __init__(self) -> None:
        self.path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gbcheck" / "torch-features.json"
        try:
            info = metadata.distribution("torch")._path  # type: ignore[attr-defined]
            self.key = f"{info.resolve()}|{info.stat().st_mtime_ns}|{torch_version()}"
        except (metadata.PackageNotFoundError, AttributeError, OSError):
            self.key = ""

    def _load(self) -> dict[str, dict[str, bool]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}

    def get(self, dotted: str) -> bool | None:
        found = self._load().get(self.key, {}).get(dotted) if self.key else None
        return found if isinstance(found, bool) else None

    def put(self, dotted: str, value: bool) -> None:
        if not self.key or os.environ.get("GBCHECK_CONFINED"):  # a checked process writes nothing here
            return
        data = self._load()
        features = data.pop(self.key, {})
        features[dotted] = value
        data = dict(list(data.items())[-(self._KEPT - 1):]) | {self.key: features}  # this one last: newest
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".features-")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream)
            os.replace(temporary, self.path)
        except OSError:
            pass


def _look_for_feature(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    if parts[0] != "torch":
        raise ValueError(f"a torch feature is a dotted name under torch, not {dotted!r}")
    try:
        value: Any = importlib.import_module("torch")
        for index, part in enumerate(parts[1:], start=1):
            try:
                value = getattr(value, part)
            except AttributeError:  # a submodule not imported yet
                value = importlib.import_module(".".join(parts[: index + 1]))
    except (AttributeError, ImportError):
        return False
    return True


# torch 2.8's registry files some ids under "_gb_type", the name of the variable that holds the type in
# Dynamo's source, instead of the type itself. These are the types later registries give those ids.
_PLACEHOLDER_TYPE = "_gb_type"
_PLACEHOLDER_FIXES = {"GB0170": "Data-dependent branching"}


def repaired_registry(entries: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """torch's graph-break registry with placeholder types replaced by the real ones (where they occur)."""
    for gb_id, real_type in _PLACEHOLDER_FIXES.items():
        known = entries.get(gb_id, [])
        if any(entry.get("Gb_type") == _PLACEHOLDER_TYPE for entry in known) and \
                not any(entry.get("Gb_type") == real_type for entry in known):
            entries[gb_id] = [{**entry, "Gb_type": real_type} if entry.get("Gb_type") == _PLACEHOLDER_TYPE else entry
                              for entry in known]
    return entries


def config_name(*names: str, config: Any = None) -> str:
    """The first of `names` (newest first) that a config module has; torch._dynamo.config by default.

    `config_name("ignore_logging_functions", "ignore_logger_methods")` is the set of logging functions
    compiled code skips, whatever this torch calls it.
    """
    if config is None:
        import torch._dynamo.config as config
    for name in names:
        if hasattr(config, name):
            return name
    raise AttributeError(f"this torch's config has none of {', '.join(names)}")


# Config names that one release keeps as an alias of another's (2.11 and later read `ignore_logger_methods` as
# `ignore_logging_functions`).
_KNOWN_ALIASES = {"ignore_logging_functions": ("ignore_logger_methods",),
                  "ignore_logger_methods": ("ignore_logging_functions",)}


def config_names_of(name: str, config: Any = None) -> tuple[str, ...]:
    """`name` and every other name of this torch's config (torch._dynamo.config by default) that reads the very
    same value: a fix that sets the alias has set the config the exercise allows."""
    if config is None:
        import torch._dynamo.config as config
    if not hasattr(config, name):
        return (name,)
    value = getattr(config, name)
    return (name, *(other for other in _KNOWN_ALIASES.get(name, ())
                    if hasattr(config, other) and getattr(config, other) is value))


# --- where Dynamo reports graph breaks ---------------------------------------------------------------

@dataclass(frozen=True)
class BreakEvent:
    """One graph break as Dynamo reported it, the same on every supported release."""

    gb_type: str  # the registry's type; a type name when torch gave none
    explanation: str
    hints: tuple[str, ...]
    stack: Any  # the user's stack at the break (a traceback.StackSummary), may be empty
    frame: tuple[str, int, str]  # (file, line, function) Dynamo was tracing: where to point without a stack
    exc: BaseException | None = None  # the break's exception where the release passes it (its chain holds causes)


# Structured parts of each graph-break message Dynamo formats, keyed by the message text, so a break's
# type, explanation and hints are read from the values torch formatted rather than parsed out of text.
_parts_by_text: dict[str, tuple[str, str, tuple[str, ...]]] = {}


def message_parts(exc_or_text: BaseException | str) -> tuple[str | None, str, tuple[str, ...]]:
    """(gb_type, explanation, hints) torch formatted into this exception's (or text's) message."""
    if isinstance(exc_or_text, BaseException):
        text = getattr(exc_or_text, "msg", None) or str(exc_or_text)
        own_type = getattr(exc_or_text, "gb_type", None)  # torch 2.11 on: the exception says it
    else:
        text, own_type = exc_or_text, None
    parts = _parts_by_text.get(text)
    if parts is None:
        # The message may carry more: a prefix, a documentation link (before 2.11), or a break re-raised
        # while handling another one (both messages, the newest last).
        found = [(text.rfind(known), known) for known in _parts_by_text if known in text]
        parts = _parts_by_text[max(found)[1]] if found else None
    if parts is None:
        return own_type, "", ()
    return own_type or parts[0], parts[1], parts[2]


def gb_type_of(exc: BaseException) -> str | None:
    """The graph-break type of a Dynamo exception, None when it is not a graph break torch typed."""
    return message_parts(exc)[0]


def install_graph_break_hooks(on_break: Callable[[BreakEvent], None], is_listening: Callable[[], bool]) -> None:
    """Call `on_break` for every graph break Dynamo logs while `is_listening()`. Once per process."""
    from torch._dynamo import exc as dynamo_exc
    from torch._dynamo import symbolic_convert

    _capture_message_parts(dynamo_exc.format_graph_break_message)
    owner = hook_point(symbolic_convert)
    original = getattr(owner, "log_graph_break")
    signature = inspect.signature(original)

    def log_graph_break(*args: Any, **kwargs: Any) -> Any:
        if is_listening():
            event = _event(signature.bind(*args, **kwargs).arguments)
            if event is not None:
                on_break(event)
        return original(*args, **kwargs)

    setattr(owner, "log_graph_break", log_graph_break)


def hook_point(symbolic_convert: Any) -> Any:
    """What holds `log_graph_break` in this module: the translator class (torch 2.10 on) or the module itself."""
    translator = getattr(symbolic_convert, "InstructionTranslatorBase", None)
    if translator is not None and "log_graph_break" in vars(translator):
        return translator
    if callable(getattr(symbolic_convert, "log_graph_break", None)):  # before torch 2.10
        return symbolic_convert
    raise RuntimeError("this torch's Dynamo has no log_graph_break to observe graph breaks with")


def _event(arguments: dict[str, Any]) -> BreakEvent | None:
    exc = arguments.get("exc")  # torch 2.11 on; torch logs an exception once
    if exc is not None and getattr(exc, "logged", False):
        return None
    reason = arguments.get("reason", "")
    gb_type, explanation, hints = message_parts(exc if exc is not None else reason)
    if gb_type is None:  # a break torch gave no type (releases before 2.10 have a few): its class and text
        gb_type = type(exc).__name__ if exc is not None else "Unsupported"
        explanation = explanation or next((line.strip() for line in str(reason).splitlines() if line.strip()), "")
    stack = getattr(exc, "real_stack", None) or arguments.get("user_stack")
    if not stack:
        import torch._guards

        stack = torch._guards.TracingContext.extract_stack()  # what torch itself falls back to
    translator = arguments.get("self")
    if translator is not None:
        frame = (translator.f_code.co_filename, translator.lineno, translator.f_code.co_name)
    else:
        options = arguments["code_options"]
        frame = (options["co_filename"], options["co_firstlineno"], options["co_name"])
    return BreakEvent(gb_type=gb_type, explanation=explanation, hints=hints, stack=stack, frame=frame, exc=exc)


def _capture_message_parts(original: Callable[..., str]) -> None:
    """Wrap format_graph_break_message wherever torch bound it (before 2.11 symbolic_convert imports it too)."""

    def format_graph_break_message(gb_type, context, explanation, hints):  # noqa: ANN001 - torch's signature
        text = original(gb_type, context, explanation, hints)
        if len(_parts_by_text) > 1000:
            _parts_by_text.clear()
        _parts_by_text[text] = (gb_type, explanation, tuple(hints))
        return text

    for name, module in list(sys.modules.items()):
        if name.startswith("torch._dynamo") and getattr(module, "format_graph_break_message", None) is original:
            module.format_graph_break_message = format_graph_break_message


@dataclass(frozen=True)
class FullgraphCapture:
    """What torch.compile(fullgraph=True) captures on its own, without the config that default mode needs."""

    scalars: bool  # `.item()` and friends (capture_scalar_outputs): from torch 2.10 on
    dynamic_shapes: bool  # `nonzero` and other data-dependent shapes (capture_dynamic_output_shape_ops)


_fullgraph_capture: list[FullgraphCapture] = []


def fullgraph_captures() -> FullgraphCapture:
    """Read from the shape environment Dynamo builds for a fullgraph=True compile of a tiny function (once)."""
    if not _fullgraph_capture:
        import torch
        import torch._guards

        seen: list[Any] = []

        def backend(gm: Any, example_inputs: list[Any]) -> Any:
            seen.append(torch._guards.TracingContext.get().fake_mode.shape_env)
            return gm.forward

        with torch._dynamo.config.patch(capture_scalar_outputs=False, capture_dynamic_output_shape_ops=False):
            torch.compile(lambda x: x + 1, backend=backend, fullgraph=True)(torch.ones(1))
        torch._dynamo.reset()
        _fullgraph_capture.append(FullgraphCapture(scalars=bool(seen[0].allow_scalar_outputs),
                                                   dynamic_shapes=bool(seen[0].allow_dynamic_output_shape_ops)))
    return _fullgraph_capture[0]


def skip_metrics_bookkeeping() -> None:
    """Replace the guard timing and the compilation-metrics record with no-ops, on releases that have them."""
    from torch._dynamo import guards, utils

    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = lambda *args: 0.0
    if hasattr(utils, "record_compilation_metrics"):
        utils.record_compilation_metrics = lambda *args, **kwargs: None
