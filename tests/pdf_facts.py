"""What the tests read back from an exported PDF: its facts with pypdf, its pages as pixels with pypdfium2
(PDFium; both in the ``test`` extra, so ``make test`` installs them; the tests used poppler's command-line
tools, which a fresh machine does not have)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pypdf import PdfReader


@dataclass(frozen=True)
class PdfFacts:
    """A PDF's pages (their sizes in points and their text), its document info and its XMP packet."""

    page_sizes: tuple[tuple[float, float], ...]
    """Each page's media box, width × height in points (1/72 inch)."""
    texts: tuple[str, ...]
    """Each page's text as a reader extracts it, every run of white space as one space: only text drawn as
    text (a vector PDF's labels and numbers) is there, never a picture of it."""
    title: str | None
    """The document info's /Title."""
    creator: str | None
    """The document info's /Creator."""
    xmp: str
    """The catalogue's XMP metadata stream as the file holds it (markup escaped as written), "" if none."""

    @property
    def pages(self) -> int:
        return len(self.page_sizes)


def pdf_facts(path: str | Path) -> PdfFacts:
    """Read ``path`` (which must be a PDF pypdf parses without repairing it: strict mode)."""
    reader = PdfReader(str(path), strict=True)
    info = reader.metadata
    stream = reader.trailer["/Root"].get("/Metadata")
    return PdfFacts(
        page_sizes=tuple((float(p.mediabox.width), float(p.mediabox.height)) for p in reader.pages),
        texts=tuple(" ".join(p.extract_text().split()) for p in reader.pages),
        title=None if info is None else info.title,
        creator=None if info is None else info.creator,
        xmp="" if stream is None else stream.get_object().get_data().decode("utf-8"),
    )


def pdf_page_pixels(path: str | Path, dpi: float = 96) -> list[np.ndarray]:
    """Each page of ``path`` rendered by PDFium at ``dpi`` (96: a 960 × 540 pt page is 1280 × 720 px), as an
    RGB array of shape (height, width, 3)."""
    import pypdfium2  # here: a venv made before it joined the test extra fails only the tests that render

    document = pypdfium2.PdfDocument(str(path))
    try:
        return [np.asarray(page.render(scale=dpi / 72).to_pil().convert("RGB")) for page in document]
    finally:
        document.close()
