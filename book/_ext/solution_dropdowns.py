"""The book's solution cells as dropdowns: a Sphinx extension, loaded by _config.yml (sphinx.local_extensions).

A solution cell (written by scripts/embed_solutions.py) is plain Markdown that Jupyter and Colab show as it
is: an HTML `<details class="solution" data-changed-lines="...">` block, a sentence and the solution's code
in a fence, then `</details>`. MyST passes the two HTML lines through as raw HTML around the parsed
sentence and code; this transform puts those parts into a sphinx-design dropdown instead, so the book's
solution looks and works like its other dropdowns (collapsed until clicked), and numbers the code's lines
and highlights the changed ones, as `literalinclude`'s `:linenos:` and `:emphasize-lines:` did.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx_design.shared import create_component

_OPENING = re.compile(r'^<details class="solution" data-changed-lines="([\d,]*)">\s*<summary>(.*?)</summary>\s*$', re.S)


def _is_raw_html(node: nodes.Node, pattern: re.Pattern | str) -> re.Match | bool | None:
    if not isinstance(node, nodes.raw) or node.get("format") != "html":
        return None
    text = node.astext().strip()
    return pattern.match(text) if isinstance(pattern, re.Pattern) else text == pattern


class SolutionDropdowns(SphinxTransform):
    """Each `<details class="solution">` ... `</details>` run of siblings becomes one dropdown."""

    default_priority = 500  # after parsing, before sphinx-design's HTML post-transform

    def apply(self, **kwargs) -> None:
        for opening in list(self.document.findall(nodes.raw)):
            found = _is_raw_html(opening, _OPENING)
            if not found or opening.parent is None:
                continue
            parent = opening.parent
            start = parent.index(opening)
            ends = [i for i in range(start + 1, len(parent)) if _is_raw_html(parent[i], "</details>")]
            if not ends:
                continue
            body = [parent[i] for i in range(start + 1, ends[0])]
            changed = [int(line) for line in found.group(1).split(",") if line]
            for block in (node for part in body for node in part.findall(nodes.literal_block)):
                block["linenos"] = True
                block["highlight_args"] = {**block.get("highlight_args", {}), "hl_lines": changed}
            title = found.group(2)
            dropdown = create_component("dropdown", opened=False, type="dropdown", has_title=True, icon=None,
                                        chevron=None, container_classes=["sd-mb-3"], title_classes=[],
                                        body_classes=[])
            dropdown += nodes.rubric(title, title)
            for part in body:
                parent.remove(part)
                dropdown += part
            parent.remove(parent[start + 1])  # the closing </details>
            parent.replace(opening, dropdown)


def setup(app):
    app.setup_extension("sphinx_design")
    app.add_transform(SolutionDropdowns)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
