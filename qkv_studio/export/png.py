"""PNG encoding of a rendered figure: faster than Qt's encoder and than Pillow's at the 4K target.

``benchmarks/png_bench.py`` measures this encoder beside Pillow's (``Image.frombuffer(...).save(format=
"PNG", compress_level=…)``) and Qt's ``QImage.save`` on the same 4K figure; ``benchmarks/README.md``
has the table and the reason this one is kept (issue 17, item 8).
"""

from __future__ import annotations

import os
import struct
import zlib

from PySide6.QtGui import QImage


def encode_png(img: QImage, *, opaque: bool, text: dict[str, str] | None = None) -> bytes:
    """``img`` as a PNG (RGB when ``opaque``, else RGBA), ~5× faster than ``QImage.save``.

    ``text`` becomes one ``iTXt`` chunk per entry (keyword → UTF-8 text, e.g. ``Description``: the
    figure's alt text), before the image data.

    Qt's encoder un-premultiplies and deflates a 4K figure at its default level on one core (~1.3 s);
    Pillow's filters every row adaptively on one core (~0.3–0.4 s).  Here each row is stored as its
    difference from the row above (PNG's "Up" filter: the rows of a heatmap repeat, so they become runs
    of zeros) and deflated at level 1 in a few slices at once (zlib releases the GIL), joined into one
    stream with sync flushes.  Raises OSError on failure.
    """
    try:
        return _encode_png(img, opaque, text or {})
    except (MemoryError, ValueError, zlib.error) as exc:
        raise OSError(f"the PNG encoder failed ({exc})") from None


def itxt(keyword: str, text: str) -> bytes:
    """The data of a PNG ``iTXt`` chunk: uncompressed UTF-8 ``text`` under a Latin-1 ``keyword`` (1–79 chars)."""
    key = keyword.encode("latin-1")
    if not 1 <= len(key) <= 79:
        raise ValueError(f"a PNG text keyword is 1–79 characters, not {keyword!r}")
    return key + b"\0\0\0" + b"\0" + b"\0" + text.encode("utf-8")  # no compression, no language, no translation


def _encode_png(img: QImage, opaque: bool, text: dict[str, str]) -> bytes:
    import numpy as np

    fmt = QImage.Format.Format_RGB888 if opaque else QImage.Format.Format_RGBA8888
    channels = 3 if opaque else 4
    conv = img.convertToFormat(fmt)
    w, h = conv.width(), conv.height()
    if conv.isNull() or w <= 0 or h <= 0:
        raise ValueError("empty image")
    bpl = conv.bytesPerLine()
    rows = np.frombuffer(conv.constBits(), np.uint8, count=bpl * h).reshape(h, bpl)[:, : w * channels]
    filtered = np.empty((h, 1 + w * channels), np.uint8)
    filtered[:, 0] = 2  # the "Up" filter on every row (the first row's "above" is zeros)
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])
    raw = memoryview(filtered.reshape(-1).data)
    slices = max(1, min(_PNG_THREADS, h // 64))
    step = -(-h // slices) * filtered.shape[1]
    parts = [raw[i:i + step] for i in range(0, len(raw), step)]

    def deflate(i: int) -> bytes:
        c = zlib.compressobj(1, zlib.DEFLATED, -15)
        return c.compress(parts[i]) + c.flush(zlib.Z_FINISH if i == len(parts) - 1 else zlib.Z_SYNC_FLUSH)

    if len(parts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(parts)) as pool:
            streams = list(pool.map(deflate, range(len(parts))))
    else:
        streams = [deflate(0)]
    idat = b"".join([b"\x78\x01", *streams, struct.pack(">I", zlib.adler32(raw))])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2 if opaque else 6, 0, 0, 0)
    phys = struct.pack(">IIB", max(1, img.dotsPerMeterX()), max(1, img.dotsPerMeterY()), 1)
    texts = b"".join(chunk(b"iTXt", itxt(k, v)) for k, v in text.items())
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"pHYs", phys) + texts + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


_PNG_THREADS = max(1, min(4, os.cpu_count() or 1))
