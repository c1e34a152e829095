"""`gbcheck diagnose` reports as text (short: one line per library group unless verbose) and HTML (all)."""

from __future__ import annotations

import html
import os

from checker.diagnose.groups import BreakGroup, LibraryGroup
from checker.diagnose.run import DiagnoseResult

OWNER_WORDS = {"you": "yours to fix", "library": "the library's to fix", "torch": "a torch limitation"}


def render_text(result: DiagnoseResult, verbose: bool = False) -> str:
    lines = [f"{result.target}: {result.graphs} graph(s) with {result.ops} op(s), "
             f"{result.total_breaks} graph break(s) of {len(result.groups)} kind(s)"]
    if result.error:
        lines.append(f"  it stopped with an error: {result.error}")
    # A group wholly inside installed packages is summed up in the library section instead.
    shown = [group for group in result.groups if verbose or not _only_in_packages(group)]
    for number, group in enumerate(shown, start=1):
        lines.append("")
        lines.append(f"{number}. {group.gb_id or '(no id)'}  {group.gb_type}  x{group.count}")
        for loc in group.locations:
            lines.append(f"     {_short(loc['file'])}:{loc['line']}  x{loc['count']}  {loc['source_line']}")
        if group.in_library and not _only_in_packages(group):
            lines.append("   Inside library code: often a consequence of a call of yours listed above.")
        for cause in group.causes:
            lines.append(f"   Behind it: {cause['gb_id'] or '(no id)'} {cause['gb_type']}: {cause['explanation']}")
            if cause["fix"]:
                lines.append(f"     its fix: {cause['fix']}")
        if group.meaning:
            lines.append(f"   What it means: {group.meaning}")
        for fix in group.fixes:
            lines.append(f"   What to do: {fix}")
        if group.chapter:
            lines.append(f"   Read: book/{group.chapter}.ipynb")
        if group.docs:
            lines.append(f"   PyTorch's docs: {group.docs}")
        if group.page:
            lines.append(f"   torch's page: {group.page}")
    if result.library:
        lines += ["", "Inside libraries" + ("" if verbose else " (--verbose or --html for details)") + ":"]
        for lib in result.library:
            lines.append(_library_line(lib))
            if verbose:
                lines += _library_details(lib)
    if not result.groups and not result.error:
        lines.append("No graph breaks: everything compiled went into the graphs.")
    return "\n".join(lines)


def _only_in_packages(group: BreakGroup) -> bool:
    return all(loc["package"] for loc in group.locations)


def _library_line(lib: LibraryGroup) -> str:
    entry = lib.entries[0] if lib.entries else None
    came_from = f", from your {_short(entry['file'])}:{entry['line']}" if entry else ""
    more = f" (+{len(lib.places) - 1} more)" if len(lib.places) > 1 else ""
    behind = "".join(f", behind it {c['gb_id'] or '(no id)'} {c['gb_type']}" for c in lib.causes)
    line = (f"  - {lib.package} {lib.version}: {lib.gb_id or '(no id)'} {lib.gb_type} x{lib.count} at "
            f"{lib.places[0]}{more}{behind}{came_from}; {OWNER_WORDS.get(lib.owner, lib.owner)}. "
            f"Try: {lib.workarounds[0] if lib.workarounds else 'see --verbose'}")
    if lib.repro_command:
        line += f" Repro: {lib.repro_command}"
    return line


def _library_details(lib: LibraryGroup) -> list[str]:
    lines = [f"      at {place}" for place in lib.places[1:]]
    lines += [f"      reached from {_short(e['file'])}:{e['line']}  {e['source_line']}" for e in lib.entries]
    lines += [f"      on your side: {way}" for way in lib.workarounds[1:]]
    lines += [f"      behind it: {c['gb_id'] or '(no id)'} {c['gb_type']}: {c['explanation']}" for c in lib.causes]
    lines.append(f"      upstream: {lib.upstream}")
    if lib.repro_command:
        lines.append(f"      repro: {lib.repro_command}")
    if lib.repro_note:
        lines.append(f"      no repro script: {lib.repro_note}")
    return lines


def render_html(result: DiagnoseResult) -> str:
    """One self-contained page (inline style, no scripts, no external resources) to share."""
    esc = html.escape
    rows = []
    for group in result.groups:
        where = "".join(f"<li><code>{esc(_short(loc['file']))}:{loc['line']}</code> ×{loc['count']} "
                        f"<code>{esc(loc['source_line'])}</code>{_entry_html(loc['entry'])}</li>"
                        for loc in group.locations)
        causes = "".join(f"<p><b>Behind it:</b> {esc(c['gb_id'] or '(no id)')} {esc(c['gb_type'])}: "
                         f"{esc(c['explanation'])}{' — <i>' + esc(c['fix']) + '</i>' if c['fix'] else ''}</p>"
                         for c in group.causes)
        fixes = "".join(f"<p><b>What to do:</b> {esc(fix)}</p>" for fix in group.fixes)
        chapter = f"<p><b>Read:</b> the chapter <i>{esc(group.chapter)}</i></p>" if group.chapter else ""
        docs = f"<p><a href='{esc(group.docs)}'>PyTorch's docs on it</a></p>" if group.docs else ""
        page = f"<p><a href='{esc(group.page)}'>torch's page on {esc(group.gb_id or '')}</a></p>" if group.page else ""
        library = "<p><i>Inside library code: see the library section below.</i></p>" if group.in_library else ""
        rows.append(f"<section><h2>{esc(group.gb_id or '(no id)')} — {esc(group.gb_type)} "
                    f"<small>×{group.count}</small></h2><ul>{where}</ul>{library}{causes}"
                    f"<p><b>What it means:</b> {esc(group.meaning)}</p>{fixes}{chapter}{docs}{page}</section>")
    for lib in result.library:
        rows.append(_library_html(lib))
    error = f"<p class='error'>It stopped with an error: {esc(result.error)}</p>" if result.error else ""
    body = "".join(rows) or "<p>No graph breaks.</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Graph breaks in {esc(result.target)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}}
section{{border-left:4px solid #cf222e;padding:0 1em;margin:1.5em 0}}section.lib{{border-color:#8250df}}
code,pre{{background:#f3f3f3;padding:0 .2em}}small{{color:#666}}.error{{color:#8250df}}</style></head><body>
<h1>Graph breaks in <code>{esc(result.target)}</code></h1>
<p>{result.graphs} graph(s) with {result.ops} operation(s); {result.total_breaks} graph break(s) of
{len(result.groups)} kind(s), most frequent first; {result.explained_breaks} explained by the course.</p>
{error}{body}</body></html>
"""


def _entry_html(entry: dict | None) -> str:
    if not entry:
        return ""
    return (f" — reached from your <code>{html.escape(_short(entry['file']))}:{entry['line']}</code> "
            f"<code>{html.escape(entry['source_line'])}</code>")


def _library_html(lib: LibraryGroup) -> str:
    esc = html.escape
    places = "".join(f"<li><code>{esc(place)}</code></li>" for place in lib.places)
    entries = "".join(f"<li><code>{esc(_short(e['file']))}:{e['line']}</code> <code>{esc(e['source_line'])}</code></li>"
                      for e in lib.entries) or "<li>none of your frames was on the stack</li>"
    ways = "".join(f"<li>{esc(way)}</li>" for way in lib.workarounds)
    causes = "".join(f"<p><b>Behind it:</b> {esc(c['gb_id'] or '(no id)')} {esc(c['gb_type'])}: {esc(c['explanation'])}</p>"
                     for c in lib.causes)
    repro = f"<p><b>Repro:</b></p><pre>{esc(lib.repro_command)}</pre>" if lib.repro_command else ""
    if lib.repro_note:
        repro += f"<p><b>No repro script:</b> {esc(lib.repro_note)}</p>"
    return (f"<section class='lib'><h2>{esc(lib.package)} {esc(lib.version)}: {esc(lib.gb_id or '(no id)')} — "
            f"{esc(lib.gb_type)} <small>×{lib.count}, {esc(OWNER_WORDS.get(lib.owner, lib.owner))}</small></h2>"
            f"<p><b>Where in {esc(lib.package)}:</b></p><ul>{places}</ul><p><b>Your calls that led there:</b></p>"
            f"<ul>{entries}</ul>{causes}<p><b>On your side:</b></p><ul>{ways}</ul><p><b>Upstream:</b> {esc(lib.upstream)}</p>"
            f"{repro}</section>")


def _short(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if not relative.startswith("..") else path
