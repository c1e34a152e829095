"""Which library call built a model, so that a repro script (`gbcheck diagnose --repro`) builds the same one.

A timm model comes from `timm.create_model(name, **options)`, a torchvision one from a builder such as
`torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, min_size=...)`: the class alone,
built with its default arguments, is another model (often a much larger one), and a detection model's
class needs a backbone no description can carry. While the diagnosed script runs, the builders that
`libraries.toml` names under `[PACKAGE.rebuild]` are wrapped as their package is imported, and each
model they return is remembered with the call that made it, its arguments described by value (the
arguments that would download weights replaced by the ones that do not). Everything here runs in the
diagnosed process.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.util
import inspect
import sys
import tomllib
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

LIBRARIES_PATH = Path(__file__).with_name("libraries.toml")


def rebuild_rules() -> dict[str, dict[str, Any]]:
    """{package: its [PACKAGE.rebuild] table}: builders (dotted names), registry (a dotted name of a dict
    whose values are builders) and random_weights (argument name -> the Python code to pass instead)."""
    data = tomllib.loads(LIBRARIES_PATH.read_text(encoding="utf-8"))
    return {package: tables["rebuild"] for package, tables in data.items() if "rebuild" in tables}


def _resolve(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


class BuilderLog:
    """Wraps the configured builders and remembers what each outermost call of one built."""

    def __init__(self, describe: Callable[[Any], dict[str, Any]], rules: dict[str, dict[str, Any]] | None = None):
        self.describe = describe  # a value as data (repro.describe_value), raising where it cannot
        self.rules = rebuild_rules() if rules is None else rules
        self.built: list[tuple[weakref.ref, dict[str, Any]]] = []
        self._depth = 0  # a builder calls others (a detection model's backbone): only the outermost counts

    def install(self) -> None:
        waiting = set()
        for package in self.rules:
            if package in sys.modules:
                self._wrap_package(package)
            else:
                waiting.add(package)
        if waiting:
            sys.meta_path.insert(0, _AfterImport(waiting, self._wrap_package))

    def remember(self, built: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 replace: dict[str, str] | None = None) -> None:
        """Remember that `fn(*args, **kwargs)` returned `built`."""
        try:
            ref = weakref.ref(built)
        except TypeError:
            return
        record: dict[str, Any] = {"builder": [fn.__module__, fn.__qualname__]}
        try:
            positional, keywords = _arguments(fn, args, kwargs)
            for name, code in (replace or {}).items():
                if name in keywords:
                    keywords[name] = _Code(code)
            record["args"] = [self._describe(value) for value in positional]
            record["kwargs"] = {name: self._describe(value) for name, value in keywords.items()}
        except Exception as odd:  # noqa: BLE001 - repro.Unreproducible names the value's type
            record = {"unreproducible": f"an argument of {fn.__qualname__} ({odd}) cannot be rebuilt from a "
                                        "description"}
        self.built.append((ref, record))

    def _describe(self, value: Any) -> dict[str, Any]:
        return {"code": str(value)} if isinstance(value, _Code) else self.describe(value)

    def origin(self, obj: Any) -> dict[str, Any] | None:
        """How `obj` was built: the remembered call, and the path of `obj` inside what it returned."""
        import torch

        living = [(ref(), record) for ref, record in reversed(self.built)]
        for built, record in living:
            if built is obj:
                return {**record, "submodule": ""}
        for built, record in living:
            if isinstance(built, torch.nn.Module):
                for name, module in built.named_modules():
                    if module is obj and name:
                        return {**record, "submodule": name}
        return None

    def _wrap_package(self, package: str) -> None:
        rule = self.rules[package]
        try:
            originals = [_resolve(name) for name in rule.get("builders", [])]
            registry = _resolve(rule["registry"]) if rule.get("registry") else {}
        except (ImportError, AttributeError):  # another version of the library: nothing to wrap
            return
        originals += list(registry.values())
        wrappers = {id(fn): self._wrapped(fn, rule.get("random_weights", {})) for fn in originals if callable(fn)}
        for name, module in list(sys.modules.items()):
            if module is not None and (name == package or name.startswith(package + ".")):
                for attribute, value in list(vars(module).items()):
                    if id(value) in wrappers:  # the originals are alive: their ids are theirs alone
                        setattr(module, attribute, wrappers[id(value)])
        for key, value in list(registry.items()):
            if id(value) in wrappers:
                registry[key] = wrappers[id(value)]

    def _wrapped(self, fn: Callable[..., Any], replace: dict[str, str]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def builder(*args, **kwargs):
            self._depth += 1
            try:
                built = fn(*args, **kwargs)
            finally:
                self._depth -= 1
            if self._depth == 0:
                self.remember(built, fn, args, kwargs, replace)
            return built
        return builder


class _Code(str):
    """Python code to write into the repro as it is (an argument replaced by random_weights)."""


def _arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list, dict]:
    """The call as positional values (only where a name cannot be used) and keywords."""
    signature = inspect.signature(fn)
    bound = signature.bind(*args, **kwargs)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            positional.append(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        else:
            keywords[name] = value
    return positional, keywords


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `done(package)` once the package's own import has finished (its submodules included)."""

    def __init__(self, packages: set[str], done: Callable[[str], None]):
        self.packages, self.done = packages, done

    def find_spec(self, name, path=None, target=None):
        if name not in self.packages:
            return None
        self.packages.discard(name)  # found once, by the finders after this one
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run, done = spec.loader.exec_module, self.done

        def exec_module(module):
            run(module)
            done(name)
        spec.loader.exec_module = exec_module
        return spec
