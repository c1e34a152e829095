"""One audit hook in the checked process, which hands each event to the layers that judge it.

Python calls every audit hook on every audited event, and a check raises about 80,000 of them, most of them
`id()` calls and attribute reads inside Dynamo that no layer judges. Each hook is a Python call per event, so
the layers (confine.py: writes and hidden reads; code_guard.py: code made on the learner's behalf) do not add
hooks of their own: each registers a handler for the events it judges, and the one hook calls those, in the
order they were registered, and nothing for any other event. A handler that raises refuses the event, and
the handlers after it are not called, as with hooks of their own. A hook cannot be removed; no handler can be
either: `watch` only adds, and the table lives in the hook's closure, not in a global a module could reach.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

Handler = Callable[[str, tuple], None]
# How far up a handler finds the frame that raised its event: `sys._getframe(CALLER)` (the hook's frame between).
CALLER = 2


def _dispatcher() -> tuple[Callable[[str, tuple], None], Callable[[Iterable[str], Handler], None]]:
    table: dict[str, tuple[Handler, ...]] = {}

    def hook(event: str, args: tuple) -> None:
        for handler in table.get(event, ()):
            handler(event, args)

    def watch(events: Iterable[str], handler: Handler) -> None:
        for event in events:
            table[event] = (*table.get(event, ()), handler)

    return hook, watch


_hook, _watch = _dispatcher()
_installed: list[bool] = []


def watch(events: Iterable[str], handler: Handler) -> None:
    """Call `handler(event, args)` for each of `events` from now on, in this process and the processes it forks
    (the hook is installed with the first handler)."""
    _watch(events, handler)
    if not _installed:
        _installed.append(True)
        sys.addaudithook(_hook)
