"""The built book, as a reader sees it: a strict build, served on 127.0.0.1 and opened in headless Chromium.

The session builds the book once (`jupyter-book build book/ -W -n --keep-going`, into `_build/html`, or into
`$BOOK_OUTPUT/_build/html` when that is set, so that a build of one's own leaves the shared one alone) and
serves it from a thread. Every page is opened as on a first visit and must log no console error, and show
one search box. The browser is Debian's `chromium` driven by playwright (which cannot download
its own browser here). Without chromium or playwright the browser tests are skipped on a developer's
machine, and fail in CI (where the environment variable CI is set), so that a missing install cannot pass.
A full-page screenshot of every chapter is kept in `_build/screenshots/`.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path(os.environ.get("BOOK_OUTPUT") or ROOT)  # jupyter-book's --path-output
HTML = OUTPUT / "_build" / "html"
SCREENSHOTS = OUTPUT / "_build" / "screenshots"
CHROMIUM = os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

CHAPTERS = {
    "what-is-a-graph-break": "What a graph break is",
    "incorrect-code": "Incorrect code",
    "data-dependent": "Data-dependent operations",
    "printing-logging": "Printing and logging",
    "untraceable-calls": "Calls Dynamo cannot trace",
    "nested-graph-breaks": "Nested graph breaks",
    "recompilations": "Recompilations",
    "python-side-effects": "Python side effects and objects",
    "dynamic-shapes": "Dynamic output shapes",
    "unbacked-symbols": "Unbacked symbols and data-dependent guards",
    "escape-hatches": "Escape hatches",
    "does-it-matter": "Does this break matter?",
    "capstone": "Finding every break in a real model",
    "running-the-course": "Running the course",
}
# A graph break each chapter's broken cells must show, as torch prints it.
BREAK_SHOWN = {
    "what-is-a-graph-break": ("Data-dependent branching", "gb0170"),
    "incorrect-code": ("TypeError when making fake tensor call", "gb0112"),
    "data-dependent": ("Tensor.tolist() with non-integer tensor", "gb0109"),
    "printing-logging": ("Failed to trace builtin operator", "gb0059"),
    "python-side-effects": ("setattr() on Tensor.requires_grad", "gb0206"),
    "dynamic-shapes": ("Dynamic shape operator", "gb0036"),
    "untraceable-calls": ("attempted to trace numpy function unsupported by PyTorch", "gb0294"),
    "nested-graph-breaks": ("Failed to trace builtin operator", "gb0059"),
    "escape-hatches": ("Call to `torch._dynamo.graph_break()`", "gb0025"),
    "does-it-matter": ("Skip calling `torch.compiler.disable()`d function", "gb0098"),
    "capstone": ("Attempted to call function marked as skipped", "gb0007"),
}


def jupyter_book() -> list[str]:
    script = Path(sys.executable).with_name("jupyter-book")
    return [str(script)] if script.exists() else ["jupyter-book"]


@pytest.fixture(scope="session")
def built_book() -> dict:
    """Build the book strictly, once per test session, into _build/html."""
    if HTML.exists():
        shutil.rmtree(HTML)
    elsewhere = ["--path-output", str(OUTPUT)] if OUTPUT != ROOT else []
    done = subprocess.run([*jupyter_book(), "build", "book/", "-W", "-n", "--keep-going", *elsewhere], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    return {"returncode": done.returncode, "log": done.stdout + done.stderr}


@pytest.fixture(scope="session")
def book_html(built_book) -> Path:
    if built_book["returncode"] != 0:
        pytest.fail("the strict book build failed:\n" + built_book["log"][-6000:])
    return HTML


@pytest.fixture(scope="session")
def site(book_html) -> str:
    """Serve _build/html on a free port of 127.0.0.1 from a thread; yields the base URL."""

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output clean
            pass

    handler = functools.partial(QuietHandler, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must install it: see running-the-course.md)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[book]')")
    if not Path(CHROMIUM).exists():
        _unavailable(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


# --- the build ------------------------------------------------------------------------------------

def test_pages_checked_here_are_the_pages_of_the_toc():
    toc = re.findall(r"file:\s*(\S+)", (ROOT / "book" / "_toc.yml").read_text(encoding="utf-8"))
    assert list(CHAPTERS) == toc, "add the new page and its title to CHAPTERS (and a break to BREAK_SHOWN)"


def test_strict_build_succeeds_without_warnings(built_book):
    assert built_book["returncode"] == 0, built_book["log"][-6000:]
    assert "build succeeded" in built_book["log"]
    assert "WARNING" not in built_book["log"], built_book["log"][-6000:]


def test_the_book_loads_jupyter_books_extensions_less_thebe_plus_its_own():
    """_config.yml lists the extensions (to leave sphinx_thebe out, whose inline script Sphinx 7.4 writes twice):
    the list must follow Jupyter Book's defaults, so that an upgrade that adds one is noticed."""
    import yaml
    from jupyter_book.config import get_default_sphinx_config

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    defaults = get_default_sphinx_config()["extensions"]
    assert config["sphinx"]["config"]["extensions"] == [e for e in defaults if e != "sphinx_thebe"] + ["solution_dropdowns"]
    assert set(config["sphinx"]["local_extensions"]) == {"solution_dropdowns"}


def test_every_solution_cell_became_a_dropdown(book_html):
    """book/_ext/solution_dropdowns.py turns each <details class="solution"> cell into the book's dropdown."""
    for chapter in CHAPTERS:
        html = (book_html / f"{chapter}.html").read_text(encoding="utf-8")
        assert 'class="solution"' not in html and "data-changed-lines" not in html, chapter


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c != "running-the-course"])
def test_chapter_offers_notebook_download_and_launch_buttons(book_html, chapter):
    html = (book_html / f"{chapter}.html").read_text(encoding="utf-8")
    assert f'href="_sources/{chapter}.ipynb"' in html
    assert (book_html / "_sources" / f"{chapter}.ipynb").exists()
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    repository = config.split("repository:")[1].split("url:")[1].split()[0]
    path = urlparse(repository).path.strip("/")
    assert f"https://colab.research.google.com/github/{path}/blob/main/book/{chapter}.ipynb" in html
    assert f"https://mybinder.org/v2/gh/{path}/main?urlpath=tree/book/{chapter}.ipynb" in html


# --- in the browser -------------------------------------------------------------------------------

@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_each_chapter_renders(site, page, chapter):
    response = page.goto(site + f"{chapter}.html")
    assert response is not None and response.ok
    heading = page.locator("article h1").first
    assert CHAPTERS[chapter] in heading.inner_text()
    if chapter != "running-the-course":
        assert page.locator("div.cell").count() > 5, "code cells are missing"
        assert page.locator("div.cell_output").count() > 3, "stored outputs are missing"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{chapter}.png"), full_page=True)


@pytest.mark.parametrize("name", [*CHAPTERS, "index", "search", "genindex"])
def test_no_page_logs_a_console_error_or_fails_a_request(site, page, name):
    """A first visit (a fresh browser context): no script error, no console error, no request answered 4xx/5xx."""
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(f"console: {message.text}"))
    page.on("pageerror", lambda error: errors.append(f"script: {error}"))
    page.on("response", lambda response: response.status >= 400 and errors.append(f"{response.status}: {response.url}"))
    page.goto(site + f"{name}.html")
    page.wait_for_load_state("networkidle")
    assert not errors, "\n".join(errors)


SEARCH_CONTROLS = ".search-button-field, .search-button, input[type=search]"


@pytest.mark.parametrize("width", [1280, 700])  # the sidebar's search on a wide page, the header's on a narrow one
@pytest.mark.parametrize("name", [*CHAPTERS, "index"])
def test_one_search_box_per_page(site, browser, name, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(site + f"{name}.html")
        controls = page.locator(SEARCH_CONTROLS)
        visible = [controls.nth(i) for i in range(controls.count()) if controls.nth(i).is_visible()]
        assert len(visible) == 1, [control.evaluate("e => e.outerHTML.slice(0, 120)") for control in visible]
    finally:
        context.close()


@pytest.mark.parametrize("chapter", list(BREAK_SHOWN))
def test_broken_cell_shows_the_graph_break_message(site, page, chapter):
    page.goto(site + f"{chapter}.html")
    broken = page.locator("div.cell.tag_raises-exception")
    assert broken.count() >= 1
    gb_type, gb_id = BREAK_SHOWN[chapter]
    errors = page.locator("div.cell.tag_raises-exception div.cell_output")
    texts = [errors.nth(i).inner_text() for i in range(errors.count())]
    shown = [t for t in texts if gb_type in t and gb_id in t]
    assert shown, f"no broken cell of {chapter} shows {gb_type} ({gb_id})"
    match = errors.filter(has_text=gb_type).first
    match.scroll_into_view_if_needed()
    assert match.is_visible()
    assert "Hint:" in shown[0], "the message's hints are missing"


@pytest.mark.parametrize("chapter", ["incorrect-code", "data-dependent", "printing-logging", "python-side-effects",
                                     "dynamic-shapes", "unbacked-symbols", "untraceable-calls", "nested-graph-breaks",
                                     "recompilations", "does-it-matter", "capstone"])
def test_solution_dropdown_is_collapsed_until_clicked(site, page, chapter):
    page.goto(site + f"{chapter}.html")
    dropdowns = page.locator("details.sd-dropdown")
    assert dropdowns.count() >= 1
    for i in range(dropdowns.count()):
        dropdown = dropdowns.nth(i)
        code = dropdown.locator("div.highlight pre")
        assert dropdown.get_attribute("open") is None, "a solution is open before it is clicked"
        assert not code.is_visible(), "a solution's code is visible before it is clicked"
        dropdown.locator("summary").click()
        code.wait_for(state="visible", timeout=5000)
        assert dropdown.get_attribute("open") is not None
        assert "def " in code.inner_text()
        assert dropdown.locator("span.hll").count() >= 1, "the changed lines are not highlighted"
        [name] = re.findall(r"The reference solution, (solutions/\S+\.py)\.", dropdown.inner_text())
        shown = code.evaluate("pre => { const copy = pre.cloneNode(true); "
                              "copy.querySelectorAll('.linenos').forEach(n => n.remove()); return copy.textContent; }")
        assert shown.rstrip("\n") == (ROOT / name).read_text(encoding="utf-8").rstrip("\n"), f"{name} is not shown whole"


def test_solution_reveal_screenshot(site, page):
    """A picture of one opened solution, for people reviewing the book."""
    page.goto(site + "data-dependent.html")
    dropdown = page.locator("details.sd-dropdown").first
    dropdown.scroll_into_view_if_needed()
    dropdown.locator("summary").click()
    dropdown.locator("div.highlight pre").wait_for(state="visible", timeout=5000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    dropdown.screenshot(path=str(SCREENSHOTS / "data-dependent-solution-open.png"))


# --- links ----------------------------------------------------------------------------------------

class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if tag in ("link", "script", "img") and (attrs.get("href") or attrs.get("src")):
            self.hrefs.append(attrs.get("href") or attrs.get("src"))


def _fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            kind = response.headers.get_content_type()
            body = response.read().decode("utf-8", "replace") if kind == "text/html" else ""
            return response.status, kind, body
    except urllib.error.HTTPError as err:
        return err.code, "", ""


def test_no_broken_internal_links(site):
    """Crawl every page reachable from index.html; every internal href must load, every #anchor exist."""
    pages: dict[str, _Links] = {}
    queue, seen, broken = [site + "index.html"], set(), []
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        status, kind, body = _fetch(url)
        if status != 200:
            broken.append(f"{url} -> {status}")
            continue
        if kind == "text/html":
            parser = _Links()
            parser.feed(body)
            pages[url] = parser
            for href in parser.hrefs:
                target = urljoin(url, href)
                if urlparse(target).netloc != urlparse(site).netloc:
                    continue  # external: not this test's business
                queue.append(urldefrag(target)[0])
    for url, parser in pages.items():
        for href in parser.hrefs:
            target, fragment = urldefrag(urljoin(url, href))
            if fragment and urlparse(target).netloc == urlparse(site).netloc:
                target_page = pages.get(target)
                if target_page is not None and fragment not in target_page.ids:
                    broken.append(f"{url}: #{fragment} not found in {target}")
    assert not broken, "\n".join(broken)
    for chapter in CHAPTERS:
        assert site + f"{chapter}.html" in pages, f"{chapter} is not linked from the book"
