"""The repository is self-contained (issue 31 item 8): every document the code, the tests, the README and the
docs cite is in the repository, and every link of the README and the docs resolves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Where citations are looked for: the package, the tests, the benchmarks and scripts, the README and docs/,
#: and the project's configuration.
SOURCES = ("qkv_studio", "tests", "benchmarks", "scripts", "docs")
TOP_FILES = ("README.md", "pyproject.toml", "Makefile")
# A document by its path ("docs/file-formats.md", "README.md", "DESIGN.md"): a name ending in .md, not part of
# a longer word or path of something else.
_DOC = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
# A Markdown link or picture: [text](target) — its target, without an #anchor.
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")


def _texts() -> list[Path]:
    files = [ROOT / name for name in TOP_FILES if (ROOT / name).exists()]
    for folder in SOURCES:
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".toml", ".txt")
                        and ".venv" not in p.parts)
    return [p for p in files if p != Path(__file__).resolve()]  # (this file's citations are samples)


def cited_documents(text: str) -> set[str]:
    """The ``*.md`` paths a text names."""
    return set(_DOC.findall(text))


def markdown_links(text: str) -> set[str]:
    """The local targets of a Markdown text's links and pictures (web addresses left out)."""
    return {t for t in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)}


def _resolves(target: str, where: Path) -> bool:
    return (ROOT / target).exists() or (where.parent / target).exists()


def test_every_cited_document_is_in_the_repository():
    files = _texts()
    assert len(files) > 100 and (ROOT / "docs" / "file-formats.md").exists()
    missing = sorted({f"{path.relative_to(ROOT)}: {doc}" for path in files
                      for doc in cited_documents(path.read_text(encoding="utf-8", errors="replace"))
                      if not _resolves(doc, path)})
    assert not missing, "cited documents not in the repository:\n" + "\n".join(missing)


def test_every_link_of_the_readme_and_the_docs_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 3
    broken = sorted(f"{page.relative_to(ROOT)}: {target}" for page in pages
                    for target in markdown_links(page.read_text(encoding="utf-8")) if not _resolves(target, page))
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


def test_the_scanners_find_citations_and_links():
    text = ("The layouts are core.numbers's (DESIGN.md); see docs/file-formats.md and README.md, "
            "[the layers](docs/architecture.md#layers), ![shot](resources/screenshots/window.png), "
            "[napari](https://napari.org/) and somefile.mdx.")
    assert cited_documents(text) == {"DESIGN.md", "docs/file-formats.md", "README.md", "docs/architecture.md"}
    assert markdown_links(text) == {"docs/architecture.md", "resources/screenshots/window.png"}
    assert not _resolves("DESIGN.md", ROOT / "README.md")
    assert _resolves("architecture.md", ROOT / "docs" / "file-formats.md")
