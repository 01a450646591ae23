"""The documentation: the site builds offline with `mkdocs build --strict`, every example in docs/ and README.md
runs (or, where a directive says it cannot run in the gate, is parsed by its command's own parser), the README
stays a landing page, and the reference names every environment variable the code reads.

Plants each test failed on: a page linking to a missing page (test_site_builds_strict: mkdocs' "target is not
found" warning, exit 1); `fuzz --budget` misspelt `--budgt` in a run block of the tutorial
(test_page_examples_run[tutorials/first-run.md]: exit 2, expected 0); `--path` misspelt in a parse-only block of
the campaigns guide ([how-to/campaigns.md]: "unrecognized arguments: --pth repair") and `-m slow` written `--slow` in
the CI guide ([how-to/ci.md]: pytest exited 4); the `exit 1` directive of the replay guide's failing block removed
([how-to/replay-a-failure.md]: exit 1, expected 0); README padded to 218 lines, and a README link to a missing
page (test_readme_is_a_landing_page); DELTA_SLOW's row deleted from the environment page
(test_environment_page_names_every_variable); a directive misspelt `parseonly` (test_examples_inventory); the
evaluator ignoring exit statuses, and running parse-only blocks (test_evaluator_catches_what_it_should).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from properties import docs_examples as dx

README_MAX_LINES = 200
PAGES = dx.pages()
SKIPPED_DIRS = {".venv", "out", "node_modules", ".git", "docs"}
CODE_FILES = [p for top in dx.ROOT.iterdir() if top.is_dir() and top.name not in SKIPPED_DIRS
              for pattern in ("*.py", "*.sh") for p in top.rglob(pattern)] + [dx.ROOT / "run"]
ENV_READ = re.compile(r"""(?:environ(?:\.get)?[\[(]["']|getenv\(["']|\$\{?|_ENV = ["'])(DELTA_[A-Z0-9_]+)""")


def _page_id(page: Path) -> str:
    return str(page.relative_to(dx.DOCS if dx.DOCS in page.parents else dx.ROOT))


def test_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` of the whole site, generated reference included, offline, with no warning."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=dx.ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("reference/commands/fuzz/index.html", "reference/tokenizers/index.html",
                 "reference/ledger-schema/index.html", "tutorials/first-run/index.html"):
        assert (site / page).is_file(), page
    # offline: no web fonts and no request to a font or CDN host in any page
    pages_html = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert "fonts.googleapis.com" not in pages_html and "fonts.gstatic.com" not in pages_html


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    """Every example of the page runs (or is parse-checked, as its directive says) in order, in a folder of its own."""
    tally = dx.run_page(page, tmp_path)
    print(f"{_page_id(page)}: " + ", ".join(f"{lang} {what} {n}" for (lang, what), n in sorted(tally.items())))
    print("seconds per block: " + ", ".join(f"line {line} {seconds:.1f}" for line, seconds in tally.seconds))


def test_examples_inventory() -> None:
    """Counts the examples the gate executes and those it only parse-checks, apart, and prints both; every
    parse-only directive gives its reason, and most examples run."""
    total = dx.Tally()
    for page in PAGES:
        total.update(dx.inventory(page))
    executed = sum(n for (_, what), n in total.items() if what == "executed")
    parsed = sum(n for (_, what), n in total.items() if what == "parse-checked")
    print("examples executed: " + ", ".join(f"{lang} {n}" for (lang, what), n in sorted(total.items())
                                            if what == "executed") + f" (total {executed})")
    print("examples parse-checked only: " + ", ".join(f"{lang} {n}" for (lang, what), n in sorted(total.items())
                                                       if what == "parse-checked") + f" (total {parsed})")
    assert executed > parsed > 0
    for page in PAGES:
        for m in re.finditer(r"<!--\s*docs-test:(.*?)-->", page.read_text(encoding="utf-8")):
            assert dx.DIRECTIVE.search(m.group(0)), f"{page}: malformed directive {m.group(0)!r}"


def test_readme_is_a_landing_page() -> None:
    """README.md stays under 200 lines and its links into docs/ point at pages that exist."""
    text = (dx.ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert links, "the README links into docs/"
    missing = [link for link in links if not (dx.ROOT / link).exists()]
    assert not missing, missing


def test_environment_page_names_every_variable() -> None:
    """Every DELTA_* variable the code reads is on the environment reference page."""
    read = {m.group(1) for f in CODE_FILES for m in ENV_READ.finditer(f.read_text(encoding="utf-8", errors="replace"))}
    page = (dx.DOCS / "reference" / "environment.md").read_text(encoding="utf-8")
    assert read, "no variable found: the pattern is broken"
    assert not sorted(v for v in read if f"`{v}`" not in page)


def _write_page(folder: Path, body: str) -> Path:
    page = folder / "page.md"
    page.write_text(body, encoding="utf-8")
    return page


def test_evaluator_catches_what_it_should(tmp_path: Path) -> None:
    """The controls of the evaluator itself: a failing block fails, an expected status is enforced both ways, a
    parse-only block with an unknown option (of a catalogued command, of pytest, of the main job) or an unknown
    ./run subcommand fails, and nothing in a parse-only block runs."""
    fence = "```"
    cases = {
        "fails": (f"{fence}sh\nfalse\n{fence}\n", True),
        "passes": (f"{fence}sh\ntrue\n{fence}\n", False),
        "expected 1, got 1": (f"<!-- docs-test: exit 1 -->\n{fence}sh\nexit 1\n{fence}\n", False),
        "expected 1, got 0": (f"<!-- docs-test: exit 1 -->\n{fence}sh\ntrue\n{fence}\n", True),
        "bad option": (f"<!-- docs-test: parse-only: plant -->\n{fence}sh\nfuzz --budgt 3s\n{fence}\n", True),
        "bad ./run": (f"<!-- docs-test: parse-only: plant -->\n{fence}sh\n./run deploy\n{fence}\n", True),
        "bad pytest": (f"<!-- docs-test: parse-only: plant -->\n{fence}sh\n./run test -n 2 --no-such-option\n{fence}\n",
                       True),
        "bad main": (f"<!-- docs-test: parse-only: plant -->\n{fence}sh\n./run main --fast\n{fence}\n", True),
        "good parse": (f"<!-- docs-test: parse-only: plant -->\n{fence}sh\nfuzz --tokenizer q --budget 1h "
                       f"&& touch ran\n./run main --only --tokenizer x/\n{fence}\n", False),
        "python fails": (f"{fence}python\nassert 1 == 2\n{fence}\n", True),
        "python parse-only": (f"<!-- docs-test: parse-only: plant -->\n{fence}python\nimport no_such_module\n"
                              f"{fence}\n", False),
    }
    for name, (body, should_fail) in cases.items():
        folder = tmp_path / name.replace(" ", "_").replace(",", "").replace("/", "")
        folder.mkdir()
        page = _write_page(folder, body)
        try:
            tally = dx.run_page(page, folder)
        except Exception:  # noqa: BLE001 - Sybil raises its own failure type, an assert its own
            failed = True
        else:
            failed = False
            assert sum(tally.values()) == 1, name
        assert failed == should_fail, name
    assert not (tmp_path / "good_parse" / "ran").exists(), "a parse-only block ran"
