"""Alt text (a picture's description) in a saved PowerPoint file, through public API only.

python-pptx has no property for a picture's description: it is the ``descr`` attribute of the picture's
``p:nvPicPr/p:cNvPr`` element in the slide's XML.  So the deck is saved with python-pptx first, and
then the slide parts of the saved package are rewritten with :mod:`zipfile` and
:mod:`xml.etree.ElementTree` (the standard library), setting ``descr`` on the pictures named in the
call.  Everything stays in memory; the caller writes the bytes atomically.

Public API::

    set_descriptions(pptx: bytes, descriptions: {(slide part name, picture name): text}) -> bytes
    picture_descriptions(pptx: bytes) -> {(slide part name, picture name): text}
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile

_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_CNVPR = f"{{{_P}}}nvPicPr/{{{_P}}}cNvPr"


def _part(name: str) -> str:
    """A package part name as python-pptx gives it (``/ppt/slides/slide1.xml``) as a zip member name."""
    return name.lstrip("/")


def _namespaces(xml: bytes) -> list[tuple[str, str]]:
    """The (prefix, uri) pairs a part declares, so that it is written back with its own prefixes."""
    return [ns for _event, ns in ET.iterparse(io.BytesIO(xml), events=("start-ns",))]


def _rewrite(xml: bytes, names: dict[str, str]) -> tuple[bytes, set[str]]:
    """The slide part with ``descr`` set on the named pictures; and the names it found."""
    for prefix, uri in _namespaces(xml):
        ET.register_namespace(prefix, uri)
    root = ET.fromstring(xml)
    found: set[str] = set()
    for pic in root.iter(f"{{{_P}}}pic"):
        c_nv_pr = pic.find(_CNVPR)
        name = None if c_nv_pr is None else c_nv_pr.get("name")
        if c_nv_pr is not None and name is not None and name in names:
            c_nv_pr.set("descr", names[name])
            found.add(name)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True), found


def set_descriptions(pptx: bytes, descriptions: dict[tuple[str, str], str]) -> bytes:
    """``pptx`` with each named picture's description set; ValueError when a picture is not there."""
    wanted: dict[str, dict[str, str]] = {}
    for (part, name), text in descriptions.items():
        wanted.setdefault(_part(part), {})[name] = text
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(pptx)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            names = wanted.pop(info.filename, None)
            if names is not None:
                data, found = _rewrite(data, names)
                missing = sorted(set(names) - found)
                if missing:
                    raise ValueError(f"no picture {missing[0]!r} on {info.filename} to describe")
            dst.writestr(info, data)
    if wanted:
        raise ValueError(f"no slide {sorted(wanted)[0]} in the deck to describe")
    return out.getvalue()


def picture_descriptions(pptx: bytes) -> dict[tuple[str, str], str]:
    """Every picture's description in a PowerPoint file, by (slide part name, picture name)."""
    found: dict[tuple[str, str], str] = {}
    with zipfile.ZipFile(io.BytesIO(pptx)) as src:
        for name in src.namelist():
            if not (name.startswith("ppt/slides/slide") and name.endswith(".xml")):
                continue
            root = ET.fromstring(src.read(name))
            for pic in root.iter(f"{{{_P}}}pic"):
                c_nv_pr = pic.find(_CNVPR)
                descr = None if c_nv_pr is None else c_nv_pr.get("descr")
                if c_nv_pr is not None and descr is not None:
                    found[(f"/{name}", c_nv_pr.get("name", ""))] = descr
    return found
