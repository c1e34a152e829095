"""Behaviour contracts: what a task asks the code to keep doing, beyond "no break, same return value".

Each `[[exercise.contract]]` table of the manifest is one named check of the report. `says` quotes the words
of the task it grades (a test holds every "keep", "still", "must" and "stays" of a task to a contract, and
every contract's words to its task), and the report shows them when the check fails. The kinds:

  effects    what the code prints (`stdout`), warns (`warnings`, from the file itself) or logs (`logs`, the
             records of one `logger`), when the file is imported (`at = "import"`) or during the calls
             (`at = "calls"`, on the check's draws or on the contract's own `inputs`), in each of `modes`,
             equal to what the reference does eagerly: the same text, or with `compare = "count"` as many
             of them (warnings by category);
  raises     on each of its `inputs` (which the reference refuses), the code raises too, in each of `modes`:
             any exception, or one named `exception`;
  state      `expression`, evaluated in the file's namespace after the mode's calls, equals the reference's
             after the same calls;
  gradients  the gradients of the outputs' sum with respect to every floating-point tensor argument and, for
             a module, every parameter, equal the reference's on the check's draws (a NaN or inf where the
             reference has a number, or a gradient where it has none, is a difference), in each of `modes`;
  interface  `expression` (a helper the task names, called) returns what `returns` describes;
  structure  established by the grader alone: `graph_holds` an operation the replayed graph must call (one of
             several, separated by `|`; a scalar read must also move the result; `a>b`: every b is computed
             from an a; `copies_at_most`: no operation called more often, subgraphs included, which a loop
             unrolled while tracing exceeds), or `file_has` a construct of the file's text: `dataclass NAME` (a
             module-level class NAME decorated with dataclass), `call MODULE.NAME` (a call of it, however
             imported; a decorator counts), `unchanged NAME` (a module-level function or class as the exercise
             ships it) or `untraced NAMES` (none of NAMES, joined by `|`, in the code torch.compile traces from
             the entry, outside eager-only branches: `print`, `copy.deepcopy`, `time.*` for a module's every
             name, `.requires_grad_` for a method, `class` for a class statement, `import`; grading/traced_text.py;
             `untraced NAMES from FUNCTION`: traced from that module-level function instead) or
             `config NAME` (`torch._dynamo.config.NAME` turned on, by assignment or `config.patch`) or
             `reaches NAMES` (one of NAMES called in the code traced from the entry on every call, outside
             any branch or loop: what the task keeps using) or `hatch NAMES` (one of NAMES applied where it
             takes effect: in the traced code, or at module level on what it calls on every call) or
             `runs NAMES` (one of NAMES still called where the file runs it: from the entry, eager-only
             branches included, or at import; what an effects contract keeps; `runs NAMES from FUNCTION`:
             from that module-level function alone);
  graded-by  the task's words are graded by a check every exercise has (`check`), on inputs that reach every
             branch: nothing more to run.

Effects, raises, state, gradients and interface are observed in the checked process, which runs the
learner's code and could fake them; structure is the grader's own reading (see the README's threat model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("effects", "raises", "state", "gradients", "interface", "structure", "graded-by")
MODES = ("eager", "default", "fullgraph")
EFFECTS = ("stdout", "warnings", "logs")
RETURNS = ("positive-float", "positive-int")
FILE_CONSTRUCTS = ("dataclass", "call", "unchanged", "untraced", "config", "reaches", "hatch", "runs")
CHECKS = ("eager-matches", "compiled-matches", "replay-matches", "no-graph-breaks", "fullgraph-compiles")


@dataclass(frozen=True)
class Contract:
    """One behaviour the task asks for, graded as the check `name`."""

    name: str  # the check's name in the report, e.g. "prints-when-eager"
    kind: str  # one of KINDS
    says: str  # the task's own words that this contract grades
    modes: tuple[str, ...] = ("eager",)  # the learner's runs it is observed in
    effects: tuple[str, ...] = ()  # effects: which of EFFECTS
    at: str = "calls"  # effects: "calls" or "import"
    compare: str = "text"  # effects: "text" or "count"
    logger: str = ""  # effects with "logs": the logger's name
    inputs: tuple[Any, ...] = ()  # effects, raises: InputCase records of the calls to observe
    exception: str = ""  # raises: the exception's type name, when the task names one
    expression: str = ""  # state, interface: Python evaluated in the file's namespace
    returns: str = ""  # interface: one of RETURNS
    graph_holds: str = ""  # structure: operation names, "a|b" for either
    copies_at_most: int = 0  # structure with graph_holds: no operation called more often in the graph (0: any)
    file_has: str = ""  # structure: "<one of FILE_CONSTRUCTS> NAME", as the docstring says
    check: str = ""  # graded-by: one of CHECKS

    @property
    def observed_in_child(self) -> bool:
        return self.kind in ("effects", "raises", "state", "gradients", "interface")


class ContractError(ValueError):
    """A contract table is malformed; the message says which field."""


_FIELDS = {"name", "kind", "says", "modes", "effects", "at", "compare", "logger", "inputs", "exception",
           "expression", "returns", "graph_holds", "copies_at_most", "file_has", "check"}
_NEEDS = {"effects": ("effects",), "raises": ("inputs",), "state": ("expression",), "gradients": (),
          "interface": ("expression", "returns"), "structure": (), "graded-by": ("check",)}


def contract_from_table(table: dict[str, Any], parse_input: Any) -> Contract:
    """A Contract from its manifest table; `parse_input` turns an input table into an InputCase."""
    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise ContractError(f"a contract has unknown fields {unknown}")
    name, kind = table.get("name", ""), table.get("kind", "")
    if not name or not all(part.isalnum() for part in name.split("-")):
        raise ContractError(f"a contract needs a name of words joined by '-', not {name!r}")
    if kind not in KINDS:
        raise ContractError(f"contract {name}: kind must be one of {KINDS}")
    if not table.get("says"):
        raise ContractError(f"contract {name}: needs `says`, the words of the task it grades")
    missing = [key for key in _NEEDS[kind] if not table.get(key)]
    if kind == "structure" and bool(table.get("graph_holds")) == bool(table.get("file_has")):
        missing.append("exactly one of graph_holds, file_has")
    at_most = table.get("copies_at_most")
    if at_most is not None and not (table.get("graph_holds") and type(at_most) is int and at_most > 0):
        missing.append("graph_holds with copies_at_most, a positive integer")
    if missing:
        raise ContractError(f"contract {name}: a {kind} contract needs {', '.join(missing)}")
    modes = tuple(table.get("modes", ("eager",)))
    if not modes or set(modes) - set(MODES):
        raise ContractError(f"contract {name}: modes are some of {MODES}")
    effects = tuple(table.get("effects", ()))
    if set(effects) - set(EFFECTS) or ("logs" in effects) != bool(table.get("logger")):
        raise ContractError(f"contract {name}: effects are some of {EFFECTS}; `logs` needs a `logger`, and only it")
    if table.get("at", "calls") not in ("calls", "import") or table.get("compare", "text") not in ("text", "count"):
        raise ContractError(f"contract {name}: `at` is calls or import, `compare` is text or count")
    if table.get("returns") and table["returns"] not in RETURNS:
        raise ContractError(f"contract {name}: returns is one of {RETURNS}")
    construct = str(table.get("file_has", "")).split()
    from_function = len(construct) == 4 and construct[0] in ("runs", "untraced") and construct[2] == "from"
    if construct and (len(construct) not in (2, 4) or construct[0] not in FILE_CONSTRUCTS
                      or (len(construct) == 4 and not from_function)):
        raise ContractError(f"contract {name}: file_has is '<{'|'.join(FILE_CONSTRUCTS)}> NAME', or 'runs NAMES "
                            "from FUNCTION' or 'untraced NAMES from FUNCTION'")
    if table.get("check") and table["check"] not in CHECKS:
        raise ContractError(f"contract {name}: check is one of {CHECKS}")
    return Contract(name=name, kind=kind, says=table["says"], modes=modes, effects=effects,
                    at=table.get("at", "calls"), compare=table.get("compare", "text"), logger=table.get("logger", ""),
                    inputs=tuple(parse_input(case) for case in table.get("inputs", ())),
                    exception=table.get("exception", ""), expression=table.get("expression", ""),
                    returns=table.get("returns", ""), graph_holds=table.get("graph_holds", ""),
                    copies_at_most=int(table.get("copies_at_most", 0)),
                    file_has=table.get("file_has", ""), check=table.get("check", ""))
