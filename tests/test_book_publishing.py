"""Publishing the book: the single-page edition for workshops without network, the GitHub Pages workflow,
and the Binder environment behind the launch buttons.

The single-page edition is built here the way running-the-course.md documents it
(`jupyter-book build book/ --builder singlehtml`), strictly, into a temporary folder so that it cannot
disturb the HTML build the browser tests make in `_build/`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def jupyter_book() -> list[str]:
    script = Path(sys.executable).with_name("jupyter-book")
    return [str(script)] if script.exists() else ["jupyter-book"]


def toc_files() -> list[str]:
    return re.findall(r"file:\s*(\S+)", (BOOK / "_toc.yml").read_text(encoding="utf-8"))


def chapter_title(name: str) -> str:
    """The page's first heading: a notebook's first markdown cell, or the Markdown page's `# ` line."""
    if (BOOK / f"{name}.ipynb").exists():
        import json

        cells = json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
    else:
        text = (BOOK / f"{name}.md").read_text(encoding="utf-8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


# --- the single-page edition ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def singlehtml(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("singlehtml")
    done = subprocess.run([*jupyter_book(), "build", "book/", "--builder", "singlehtml", "-W", "-n", "--keep-going",
                           "--path-output", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    folder = out / "_build" / "singlehtml"
    page = folder / "index.html"
    return {"returncode": done.returncode, "log": done.stdout + done.stderr, "folder": folder,
            "html": page.read_text(encoding="utf-8") if page.exists() else ""}


def test_single_page_build_succeeds_without_warnings(singlehtml):
    assert singlehtml["returncode"] == 0, singlehtml["log"][-6000:]
    assert "build succeeded" in singlehtml["log"]
    assert "WARNING" not in singlehtml["log"], singlehtml["log"][-6000:]
    assert singlehtml["html"], "no index.html in _build/singlehtml"


def plain(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_single_page_holds_every_chapter_in_order(singlehtml):
    html = singlehtml["html"]
    # On the single page the landing page's title is the <h1>, and each chapter's title an <h2>.
    headings = [plain(h) for h in re.findall(r"<h[12]>(.*?)</h[12]>", html, re.S)]
    positions = []
    for name in toc_files():
        anchor = f'id="document-{name}"'
        assert anchor in html, f"{name} is missing from the single page"
        positions.append(html.index(anchor))
        title = chapter_title(name).replace("`", "")
        assert any(title in heading for heading in headings), f"{name}: no heading {title!r}"
    assert positions == sorted(positions), "the chapters are not in the order of _toc.yml"


def test_single_page_has_the_stored_outputs_and_the_solutions(singlehtml):
    html = singlehtml["html"]
    # A graph-break message from a broken cell of the first and of the last chapter...
    assert "gb0170.html" in html and "Attempted to call function marked as skipped" in html
    # ...a checker report stored under an exercise, and a solution (collapsed) from solutions/.
    assert "gbcheck-report" in html
    assert "details" in html and "sd-dropdown" in html
    assert "masked_softmax_graph = torch._dynamo.nonstrict_trace(masked_softmax)" in plain(html)


class _Resources(HTMLParser):
    def __init__(self):
        super().__init__()
        self.resources: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.resources.append(("script", attrs["src"]))
        if tag == "link" and attrs.get("rel") == "stylesheet" and attrs.get("href"):
            self.resources.append(("stylesheet", attrs["href"]))
        if tag == "img" and attrs.get("src"):
            self.resources.append(("image", attrs["src"]))


def test_single_page_needs_nothing_from_the_network(singlehtml):
    """Every stylesheet, script and image the page loads is in the folder, so a copy of it works offline.

    Two exceptions: MathJax, which Sphinx links from a CDN on every page (the book has no formulas), and
    searchindex.js, which the single-page builder does not write (the search box does not work on the
    single page; the browser's own find does).
    """
    parser = _Resources()
    parser.feed(singlehtml["html"])
    assert parser.resources
    for kind, url in parser.resources:
        parsed = urlparse(url)
        if parsed.path == "searchindex.js":
            continue
        if parsed.scheme in ("http", "https") or url.startswith("//"):
            assert "mathjax" in url, f"the single page loads a {kind} from the network: {url}"
            continue
        assert (singlehtml["folder"] / parsed.path).exists(), f"missing {kind}: {url}"


# --- GitHub Pages ---------------------------------------------------------------------------------------

def load_workflow(name: str) -> dict:
    try:
        import yaml  # PyYAML comes with jupyter-book (the `book` extra)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("PyYAML is not installed: pip install -e '.[book]'")
        pytest.skip("PyYAML is not installed (pip install -e '.[book]')")
    path = ROOT / ".github" / "workflows" / name
    assert path.exists(), f"no workflow {name}"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def workflow() -> dict:
    return load_workflow("book.yml")


def test_pages_workflow_builds_strictly_and_deploys_the_html(workflow):
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers["push"]["branches"] == ["main"]
    assert workflow["permissions"]["pages"] == "write" and workflow["permissions"]["id-token"] == "write"
    build = workflow["jobs"]["build"]
    runs = "\n".join(step.get("run", "") for step in build["steps"])
    assert "scripts/setup.sh" in runs and "torch==2.13.0" in runs, "install as scripts/setup.sh does, CPU torch"
    assert re.search(r"jupyter-book build book/ -W\b", runs), "the book must be built strictly"
    assert "--builder singlehtml" in runs
    uses = {step.get("uses", "").split("@")[0]: step for step in build["steps"]}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert any(step.get("uses", "").startswith("actions/deploy-pages@") for step in deploy["steps"])
    assert "pull_request" in deploy["if"], "pull requests build the book but must not deploy it"


# --- Binder -------------------------------------------------------------------------------------------

def test_binder_installs_the_cpu_torch_of_the_outputs_and_the_course():
    lines = [line.strip() for line in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert "torch==2.13.0+cpu" in lines
    assert "-e ." in lines, "the course, editable: the checker reads exercises/ from the repository"
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "binderhub_url:" in config


# --- Releases -----------------------------------------------------------------------------------------

def test_release_workflow_builds_and_uploads_the_sdist_and_wheel_on_a_tag():
    workflow = load_workflow("release.yml")
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers == {"push": {"tags": ["v*"]}}
    runs = "\n".join(step.get("run", "") for step in workflow["jobs"]["build"]["steps"])
    assert "python -m build" in runs and "twine check" in runs
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "build" and publish["permissions"]["id-token"] == "write"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
