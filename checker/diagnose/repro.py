"""Minimal repro scripts for breaks inside a library (`gbcheck diagnose --repro DIR`).

While the diagnosed code runs, every compiled call that hit a new break is described: the compiled
object (a transformers or diffusers model by its class and config, a plain module by its class) and its
arguments by shape and dtype. For a library's break, the script rebuilds that object from the library
alone (random weights, no download), calls it compiled on random inputs of the same shapes, and asks
torch to log its graph breaks: a file to attach to an upstream report, without the user's code.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checker.diagnose.builders import BuilderLog

MAX_CALLS = 20  # calls described per run: enough for every compiled region of a training script


class Unreproducible(Exception):
    """A value or object the repro cannot rebuild from its description."""


# --- describing (inside the diagnosed process) -----------------------------------------------------

def describe_root(obj: Any, origin: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the compiled object is and how to build it again; `origin` is the library call that built it
    (builders.BuilderLog.origin), where one was seen."""
    import torch

    from checker.dynamo import frames

    if not isinstance(obj, torch.nn.Module):
        return {"kind": "function", "module": getattr(obj, "__module__", ""), "name": getattr(obj, "__qualname__", "")}
    cls = type(obj)
    try:
        installed = not frames.is_own_code(inspect.getsourcefile(cls))
    except TypeError:
        installed = False
    root = {"module": cls.__module__, "name": cls.__qualname__, "training": obj.training, "installed": installed}
    if origin:
        if origin.get("unreproducible"):
            return {**root, "kind": "unreproducible", "why": origin["unreproducible"]}
        return {**root, "kind": "builder", "builder": origin["builder"], "builder_args": origin["args"],
                "builder_kwargs": origin["kwargs"], "submodule": origin["submodule"]}
    config = getattr(obj, "config", None)
    if hasattr(config, "to_json_string") and hasattr(config, "to_dict"):  # a transformers PretrainedConfig
        cfg = type(config)
        return {**root, "kind": "transformers", "config_module": cfg.__module__, "config_name": cfg.__qualname__,
                "config": json.dumps(json.loads(config.to_json_string(use_diff=True)))}
    if config is not None and hasattr(cls, "from_config"):  # a diffusers ModelMixin (its config is a dict)
        return {**root, "kind": "diffusers", "config": json.dumps(dict(config), default=str)}
    try:
        needs_args = any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                         for p in inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        needs_args = True
    # Arguments with defaults may still have been given: the class is rebuilt with none only where that
    # gives the same model.
    return {**root, "kind": "module" if not needs_args and _defaults_rebuild(obj) else "module-with-args"}


def _defaults_rebuild(obj: Any) -> bool:
    """Whether the class built with its default arguments is the same model: the same repr (every layer
    with its sizes and options) and tensors of the same names and shapes. The user's random stream is
    left as it was."""
    import torch

    def shapes(module):
        return [(name, tuple(tensor.shape)) for name, tensor in module.state_dict().items()]

    with torch.random.fork_rng(devices=[]):
        try:
            fresh = type(obj)()
        except Exception:  # noqa: BLE001 - a constructor that needs more than its defaults
            return False
    return repr(fresh) == repr(obj) and shapes(fresh) == shapes(obj)


def describe_value(value: Any) -> dict[str, Any]:
    import torch

    if isinstance(value, torch.Tensor):
        found: dict[str, Any] = {"tensor": list(value.shape), "dtype": str(value.dtype).removeprefix("torch."),
                                 "requires_grad": value.requires_grad}
        if not (value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
            found["low"] = int(value.min()) if value.numel() else 0
            found["high"] = int(value.max()) + 1 if value.numel() else 1
        return found
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, (tuple, list)):
        return {"sequence": [describe_value(item) for item in value], "tuple": isinstance(value, tuple)}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": {key: describe_value(item) for key, item in value.items()}}
    raise Unreproducible(type(value).__name__)


def describe_call(root: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                  origin: dict[str, Any] | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"root": describe_root(root, origin)}
    try:
        call["args"] = [describe_value(arg) for arg in args]
        call["kwargs"] = {key: describe_value(arg) for key, arg in kwargs.items()}
    except Unreproducible as odd:
        call["unreproducible"] = f"an argument of type {odd} cannot be rebuilt from a description"
    return call


class CallLog:
    """Describes each compiled call that hit new graph breaks (keys of engine.Recording.breaks)."""

    def __init__(self, breaks: dict, builders: BuilderLog | None = None):
        self.breaks = breaks
        self.builders = builders  # how the compiled models were built, where a library's builder did it
        self.calls: list[dict[str, Any]] = []

    def watch(self, original: Any, compiled: Any) -> Any:
        """Watch a compiled object's calls; returns what torch.compile should return."""
        import torch

        if isinstance(compiled, torch.nn.Module) and callable(compiled.__dict__.get("forward")):
            # OptimizedModule keeps Dynamo's wrapper as an instance attribute: wrapping it there keeps
            # the module's type and attributes as the user's code expects them.
            compiled.forward = self._watched(original, compiled.forward)
            return compiled
        return self._watched(original, compiled)

    def _watched(self, original: Any, call: Callable[..., Any]) -> Callable[..., Any]:
        def watched(*args, **kwargs):
            before = set(self.breaks)
            try:
                return call(*args, **kwargs)
            finally:  # described only when the call hit new breaks: a training loop's later steps cost nothing
                new = [list(key) for key in self.breaks if key not in before]
                if new and len(self.calls) < MAX_CALLS:
                    origin = self.builders.origin(original) if self.builders else None
                    self.calls.append({**describe_call(original, args, kwargs, origin), "breaks": new})
        return watched


# --- writing (in the grader) -----------------------------------------------------------------------

def repro_plan(package: str, gb_type: str, files: set[str],
               calls: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """The compiled call a repro of this library break would rebuild, or (None, why none can be written)."""
    call = next((c for c in calls if any(key[0] == gb_type and key[1] in files for key in c["breaks"])), None)
    if call is None:
        return None, "no compiled call was seen hitting this break"
    root = call["root"]
    if call.get("unreproducible"):
        return None, call["unreproducible"]
    if root["kind"] == "unreproducible":
        return None, root["why"]
    if root["kind"] == "function":
        return None, f"the compiled {root['name']} is not a model a script can rebuild from {package} alone"
    if not root.get("installed", root["module"].split(".")[0] == package):
        return None, (f"the compiled object is your {root['name']}, not {package}'s: compile the {package} part "
                      f"alone (torch.compile(that_submodule)) and run diagnose --repro on that")
    if root["kind"] == "module-with-args":
        return None, (f"the compiled {root['name']} was built with arguments diagnose did not see (a repro rebuilds "
                      "a model from its config, or from a library builder such as timm.create_model or "
                      "torchvision.models.*)")
    return call, ""


def write_repro(directory: str, package: str, version: str, gb_id: str | None, gb_type: str,
                files: set[str], calls: list[dict[str, Any]]) -> tuple[str, str]:
    """Write a repro script for this library break; returns (path, "") or ("", why none was written)."""
    call, why = repro_plan(package, gb_type, files, calls)
    if call is None:
        return "", why
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"repro_{package}_{(gb_id or 'break').lower()}.py")
    with open(path, "w", encoding="utf-8") as out:
        out.write(_script(package, version, gb_id, gb_type, call["root"], call))
    return path, ""


def _script(package: str, version: str, gb_id: str | None, gb_type: str, root: dict[str, Any],
            call: dict[str, Any]) -> str:
    import torch

    lines = [f'"""Reproduces {gb_id or "a graph break"} ({gb_type}) inside {package} {version} with torch {torch.__version__}.',
             "",
             f"Builds {root['module']}.{root['name']} with random weights (no download), compiles it and calls it on",
             "random inputs of the shapes that hit the break. torch logs each graph break it meets",
             f'(TORCH_LOGS="graph_breaks"); look for {gb_id or gb_type}. Written by `gbcheck diagnose --repro`.',
             '"""', "", "import json", "from importlib.metadata import packages_distributions, version", "",
             "import torch"]
    if root["kind"] == "builder":  # the library call that built it, as the user made it
        module, name = root["builder"]
        arguments = [_value_code(arg) for arg in root["builder_args"]]
        arguments += [f"{key}={_value_code(arg)}" for key, arg in root["builder_kwargs"].items()]
        build = f"model = {name}({', '.join(arguments)})"
        if len(build) > 100:  # one argument a line
            build = f"model = {name}(\n" + "".join(f"    {argument},\n" for argument in arguments) + ")"
        lines += [f"from {module} import {name}", "", "torch.manual_seed(0)", build]
        if root["submodule"]:
            lines.append(f"model = model.get_submodule({root['submodule']!r})")
    else:
        lines.append(f"from {root['module']} import {root['name']}")
    if root["kind"] == "transformers":
        lines += [f"from {root['config_module']} import {root['config_name']}", "",
                  f"CONFIG = json.loads({root['config']!r})", "", "torch.manual_seed(0)",
                  f"model = {root['name']}({root['config_name']}.from_dict(CONFIG))"]
    elif root["kind"] == "diffusers":
        lines += ["", f"CONFIG = json.loads({root['config']!r})", "", "torch.manual_seed(0)",
                  f"model = {root['name']}.from_config(CONFIG)"]
    elif root["kind"] == "module":
        lines += ["", "torch.manual_seed(0)", f"model = {root['name']}()"]
    lines.append(f"model.train({root['training']})")
    args = ", ".join(_value_code(arg) for arg in call["args"])
    kwargs = ", ".join(f"{key}={_value_code(arg)}" for key, arg in call["kwargs"].items())
    lines += [f"args = ({args}{',' if len(call['args']) == 1 else ''})", f"kwargs = dict({kwargs})", "",
              "torch._logging.set_logs(graph_breaks=True)",
              "# fullgraph=True instead stops at the first graph break with its full message.",
              'compiled = torch.compile(model, backend="eager")', "compiled(*args, **kwargs)",
              f'print("torch", torch.__version__, "{package}", version(packages_distributions()["{package}"][0]))', ""]
    return "\n".join(lines)


def _value_code(found: dict[str, Any]) -> str:
    if "tensor" in found:
        shape, dtype = tuple(found["tensor"]), f"torch.{found['dtype']}"
        if "high" in found:
            code = f"torch.randint({found['low']}, {max(found['high'], found['low'] + 1)}, {shape}, dtype={dtype})"
        elif found["dtype"] == "bool":
            code = f"torch.ones({shape}, dtype=torch.bool)"
        else:
            code = f"torch.randn({shape}, dtype={dtype})"
        return code + (".requires_grad_()" if found["requires_grad"] else "")
    if "value" in found:
        return repr(found["value"])
    if "code" in found:
        return found["code"]
    if "sequence" in found:
        items = ", ".join(_value_code(item) for item in found["sequence"])
        return f"({items}{',' if len(found['sequence']) == 1 else ''})" if found["tuple"] else f"[{items}]"
    return "dict(" + ", ".join(f"{key}={_value_code(item)}" for key, item in found["dict"].items()) + ")"
