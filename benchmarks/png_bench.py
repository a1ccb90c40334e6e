#!/usr/bin/env python
"""PNG encoders side by side (issue 17 item 8): the 4K export of a 64-token figure.

Renders the figure (3840 px wide, as ``export_png_4k_ms_n64`` in ``run.py``), opaque and transparent,
and encodes that same image with

* the app's own encoder, ``qkv_studio/export/png.py`` (NumPy "Up" filter + zlib level 1 in
  parallel slices),
* Pillow's C encoder (``Image.frombuffer(...).save(format="PNG", compress_level=…)``) at several
  levels,
* Qt's ``QImage.save`` (what the app's encoder was written to beat),

each checked to decode to exactly the rendered pixels.  For each it times the encoding alone and the
whole export (render + encode + atomic write), and finally ``export_file`` as the app does it.  The
candidates run round-robin (one of each per round), so drift during the run touches them alike.
Prints one table (Markdown): median milliseconds and file size.  The target is the 4K PNG export
≤ 300 ms in total; the exit status is 1 when the app's export misses it.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/png_bench.py [--reps 9] [--n 64] [--width 3840]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
sys.path.insert(0, str(HERE))

TARGET_MS = 300.0


def pillow_png(img, *, opaque: bool, level: int, strategy: int = -1) -> bytes:
    """Pillow's encoder on the same pixels (the conversion from Qt's premultiplied ARGB included)."""
    import io

    from PIL import Image
    from PySide6.QtGui import QImage

    mode = "RGB" if opaque else "RGBA"
    conv = img.convertToFormat(QImage.Format.Format_RGB888 if opaque else QImage.Format.Format_RGBA8888)
    pil = Image.frombuffer(mode, (conv.width(), conv.height()), conv.constBits(), "raw", mode,
                           conv.bytesPerLine(), 1)
    buf = io.BytesIO()
    pil.save(buf, format="PNG", compress_level=level, compress_type=strategy)
    return buf.getvalue()


def qt_png(img, *, opaque: bool) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(data.data())


def interleaved_ms(candidates: dict[str, object], reps: int) -> dict[str, float]:
    """Median ms of each candidate, run round-robin (one of each per round, after a warm-up round), so
    the machine's drift during the run touches them all alike."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for round_ in range(reps + 1):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            fn()
            if round_:
                times[name].append((time.perf_counter() - t0) * 1000.0)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--n", type=int, default=64, help="tokens (default 64)")
    ap.add_argument("--width", type=int, default=3840, help="PNG width in pixels (default 3840)")
    args = ap.parse_args(argv)

    import PIL
    from PySide6.QtGui import QImage
    from scenes import random_scene

    from qkv_studio.export import png
    from qkv_studio.export.atomic import write_atomic
    from qkv_studio.export.figures import ensure_app
    from qkv_studio.export.files import export_file
    from qkv_studio.render.figure import FigureOptions, background_color, render_image

    ensure_app()
    scene = random_scene(args.n)
    load_before = os.getloadavg()[0]  # a shared machine: say how busy it was
    #: (name, encoder(img, opaque) -> bytes); Pillow's zlib strategies: -1 default, 3 Z_RLE
    encoders = [("export/png.py (Up filter, zlib 1, parallel slices)",
                 lambda img, opaque: png.encode_png(img, opaque=opaque))]
    for level, strategy in ((1, -1), (3, -1), (6, -1), (1, 3), (3, 3)):
        label = f"Pillow {PIL.__version__} compress_level={level}" + (" compress_type=Z_RLE" if strategy == 3 else "")
        encoders.append((label, lambda img, opaque, lv=level, st=strategy: pillow_png(img, opaque=opaque, level=lv,
                                                                                       strategy=st)))
    encoders.append(("QImage.save (Qt)", lambda img, opaque: qt_png(img, opaque=opaque)))

    rows: list[tuple[str, float, float, int]] = []
    totals: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fig.png")
        for background in ("theme", "transparent"):
            options = FigureOptions(stage="weights", background=background).validated()
            opaque = background_color(options).alpha() == 255
            img = render_image(scene, options, args.width)
            reference = img.convertToFormat(QImage.Format.Format_ARGB32)
            kind = "opaque, RGB" if opaque else "transparent, RGBA"
            # every candidate twice: the encoding alone, and the whole export (render + encode + write)
            timed: dict[str, object] = {"render": lambda: render_image(scene, options, args.width)}
            sizes: dict[str, int] = {}
            names = [name for name, _ in encoders if opaque or not name.startswith("QImage")]
            for name, encode in encoders:
                if name not in names:
                    continue
                data = encode(img, opaque)
                back = QImage.fromData(data, "PNG").convertToFormat(QImage.Format.Format_ARGB32)
                assert back == reference, f"{name}: the decoded PNG differs from the rendered pixels"
                sizes[name] = len(data)
                timed[f"encode {name}"] = lambda e=encode: e(img, opaque)
                timed[f"export {name}"] = lambda e=encode: write_atomic(
                    path, e(render_image(scene, options, args.width), opaque))
            timed["export_file"] = lambda: export_file(scene, path, width=args.width, options=options)
            ms = interleaved_ms(timed, args.reps)
            rows.append((f"{kind}: render only, {img.width()}×{img.height()}", ms["render"], float("nan"), 0))
            for name in names:
                rows.append((f"  {name}", ms[f"encode {name}"], ms[f"export {name}"], sizes[name]))
            totals.append(ms["export_file"])
            rows.append(("  export_file, as the app exports", float("nan"), ms["export_file"], os.path.getsize(path)))

    print(f"PNG export of a {args.n}-token figure, {args.width} px wide; median ms of {args.reps} "
          f"(target: the whole export ≤ {TARGET_MS:.0f} ms); load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs")
    width = max(len(r[0]) for r in rows)
    print(f"| {'encoder':<{width}} | {'encode ms':>9} | {'export ms':>9} | {'KiB':>5} |")
    print(f"|{'-' * (width + 2)}|{'-' * 10}:|{'-' * 10}:|{'-' * 6}:|")
    for name, encode_ms, total_ms, size in rows:
        kib = f"{size / 1024:.0f}" if size else ""
        enc = "" if encode_ms != encode_ms else f"{encode_ms:.0f}"
        total = "" if total_ms != total_ms else f"{total_ms:.0f}"
        print(f"| {name:<{width}} | {enc:>9} | {total:>9} | {kib:>5} |")
    ok = all(t <= TARGET_MS for t in totals)
    print(f"target {'met' if ok else 'MISSED'}: the app's export {', '.join(f'{t:.0f}' for t in totals)} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
