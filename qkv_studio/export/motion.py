"""Animated stages: the stage sequence as GIF, APNG (Pillow) and MP4/H.264 (imageio-ffmpeg).

Each picture is drawn offscreen through the figure renderer (:func:`qkv_studio.render.figure.paint_figure`)
into a 16:9 frame: a held stage is that stage's still figure (pixel for pixel the PNG export of the
same width, centred on the theme's background), a morph frame is :class:`~qkv_studio.render.figure.Morph`
(the window's morph: colours and numbers mixed, :mod:`qkv_studio.core.morph`).  Which pictures and for
how long is :mod:`qkv_studio.export.timeline`'s.

Public API::

    frame_size(width) -> (w, h)
    render_pictures(scene, options, motion, width, *, query) -> list[Picture]
    gif_bytes / apng_bytes / mp4_bytes(scene, options, motion, width, *, query) -> bytes

Consecutive pictures that are the same image (vectors and scores draw the same matrix under the same
title) are one picture lasting both holds.  GIF and APNG store each picture once with its duration;
the MP4 repeats it at the constant frame rate players expect (H.264 in yuv420p with ``+faststart``,
which PowerPoint, Keynote and browsers play).  A generation (``motion.generated``) shows the scene's
first tokens growing by one each step (the newest token's row outlined as the query, the step named in
the title).  The alt text of the stages goes into the GIF comment,
the APNG's ``iTXt`` Description and the MP4's ``comment`` tag.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from qkv_studio.core import Scene
from qkv_studio.core.describe import describe
from qkv_studio.export.timeline import Frame, MotionOptions, frame_durations_ms, generation_timeline, timeline
from qkv_studio.render.figure import FigureOptions, Morph, background_color, figure_size, paint_figure

if TYPE_CHECKING:  # (both are imported where they are used: the numbers exports load neither)
    import numpy as np
    from PIL import Image

ASPECT = (16, 9)
#: Widest frame per format: GIF/APNG keep every picture in memory while encoding; an MP4 is streamed.
MAX_WIDTH = {".gif": 1920, ".apng": 1920, ".mp4": 3840}
MIN_WIDTH = 160
#: Browsers play GIF frames shorter than 20 ms at 100 ms: above 50 fps a GIF would crawl.
GIF_MAX_FPS = 50


@dataclass
class Picture:
    """One distinct picture: the frame image, how many video frames it lasts, the stages it shows
    (two when consecutive stills are the same image) and whether it is a held stage."""

    image: QImage
    count: int
    stages: tuple[str, ...]
    still: bool


def frame_size(width: int, suffix: str = ".mp4") -> tuple[int, int]:
    """The 16:9 frame for ``width`` (both sides even, as H.264 needs); ValueError out of range."""
    hi = MAX_WIDTH.get(suffix, 1920)
    if isinstance(width, bool) or not isinstance(width, int) or not MIN_WIDTH <= width <= hi:
        raise ValueError(f"an animated {suffix[1:].upper()} is {MIN_WIDTH}–{hi} pixels wide, not {width!r}")
    w = width - width % 2
    h = round(w * ASPECT[1] / ASPECT[0])
    return w, h - h % 2


def _frame_options(options: FigureOptions, stage: str) -> FigureOptions:
    # (a video frame is opaque: a transparent figure is drawn on its theme's background)
    background = "theme" if options.background == "transparent" else options.background
    return replace(options, stage=stage, background=background).validated()


def figure_rect(scene: Scene, options: FigureOptions, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """Where the stage's figure goes in a frame: (x, y, w, h) in whole pixels, the figure as large as
    fits and centred, of exactly the size a PNG export ``w`` px wide has."""
    natural = figure_size(scene, options)
    fw, fh = size
    w = max(16, min(fw, round(natural.width() * fh / natural.height())))
    while w > 16 and max(1, round(w * natural.height() / natural.width())) > fh:
        w -= 1
    h = max(1, round(w * natural.height() / natural.width()))
    return (fw - w) // 2, (fh - h) // 2, w, h


def generation_rects(scene: Scene, options: FigureOptions, size: tuple[int, int], generated: int
                     ) -> dict[int, tuple[int, int, int, int]]:
    """Where each step of a generation goes in a frame, by its number of tokens: every step at one scale
    (the largest at which each fits) from one top-left corner, so the grid stays put and grows by a row
    and a column a step (each rect of exactly the size a PNG export ``w`` px wide has)."""
    fw, fh = size
    steps = {m: generation_step(scene, options, m, generated) for m in range(scene.n - generated, scene.n + 1)}
    naturals = {m: figure_size(s, o) for m, (s, o) in steps.items()}
    most_w = max(n.width() for n in naturals.values())
    most_h = max(n.height() for n in naturals.values())
    k = min(fw / most_w, fh / most_h)
    x0, y0 = int((fw - most_w * k) // 2), int((fh - most_h * k) // 2)
    rects = {}
    for m, natural in naturals.items():
        w = max(16, min(fw - x0, int(natural.width() * k)))
        h = max(1, round(w * natural.height() / natural.width()))
        while w > 16 and h > fh - y0:
            w -= 1
            h = max(1, round(w * natural.height() / natural.width()))
        rects[m] = (x0, y0, w, h)
    return rects


class _Painter:
    """Draws the pictures of one animation (the stills once each)."""

    def __init__(self, scene: Scene, options: FigureOptions, size: tuple[int, int], generated: int = 0) -> None:
        self.scene, self.options, self.size, self.generated = scene, options, size, generated
        self._steps = {} if not generated else generation_rects(scene, options, size, generated)

    def draw(self, frame: Frame) -> QImage:
        opts = _frame_options(self.options, frame.stage)
        scene = self.scene
        if frame.tokens is not None:  # a generation's step: the first tokens, the newest one's row outlined
            scene, opts = generation_step(scene, opts, frame.tokens, self.generated)
        w, h = self.size
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        if img.isNull():
            raise ValueError(f"cannot allocate a {w}×{h} frame")
        bg = background_color(opts)
        img.fill(bg if bg.alpha() == 255 else QColor("#ffffff"))
        step = None if frame.tokens is None else self._steps.get(frame.tokens)
        x, y, fw, fh = step or figure_rect(scene, opts, self.size)
        painter = QPainter(img)
        try:
            painter.translate(x, y)
            morph = None if frame.still or frame.source is None else Morph(frame.source, frame.t)
            paint_figure(painter, QRectF(0, 0, fw, fh), scene, opts, morph)
        finally:
            painter.end()
        return img


def prefix(scene: Scene, tokens: int) -> Scene:
    """The scene's first ``tokens`` tokens (a causal head's rows for them are the same as in the whole)."""
    while scene.n > tokens:
        scene = scene.remove_token(scene.n - 1)
    return scene


def generation_step(scene: Scene, options: FigureOptions, tokens: int, generated: int
                    ) -> tuple[Scene, FigureOptions]:
    """A generation's step of ``tokens`` tokens (of which the scene's last ``generated`` were generated):
    its scene, and options outlining the newest token's row with the step in the title ("step 2 of 3:
    + “on”"; the prompt alone is step 0)."""
    step = prefix(scene, tokens)
    k = tokens - (scene.n - generated)
    what = "the prompt" if k == 0 else f"step {k} of {generated}: + “{step.token_label(tokens - 1)}”"
    heading = f"{options.heading} · {what}" if options.heading else what
    return step, replace(options, query=tokens - 1, heading=heading).validated()


def render_pictures(scene: Scene, options: FigureOptions, motion: MotionOptions, width: int, *, query: int,
                    suffix: str = ".mp4") -> list[Picture]:
    """Every distinct picture of the animation, in order (identical consecutive ones merged)."""
    from qkv_studio.export.figures import ensure_app

    ensure_app()
    motion = motion.validated()
    size = frame_size(width, suffix)
    painter = _Painter(scene, replace(options, query=query), size, motion.generated)
    frames = generation_timeline(motion, options.stage, scene.n) if motion.generated else timeline(motion)
    out: list[Picture] = []
    for frame in frames:
        img = painter.draw(frame)
        last = out[-1] if out else None
        if last is not None and last.still and frame.still and last.image == img:
            last.count += frame.count
            last.stages += (frame.stage,)
            continue
        out.append(Picture(img, frame.count, (frame.stage,), frame.still))
    return out


def description(scene: Scene, options: FigureOptions, motion: MotionOptions, *, query: int) -> str:
    """The animation's alt text: each stage's, in order (a generation: the prompt's, then each step's)."""
    if motion.generated:
        first = scene.n - motion.generated
        steps = [generation_step(scene, replace(options, heading=""), m, motion.generated)
                 for m in range(first, scene.n + 1)]
        texts = [describe(s, o.stage, o.query, heading=o.heading).text for s, o in steps]
        return (f"Generation, one token at a time ({motion.generated} generated after {first} of the prompt): "
                + " Then: ".join(texts))
    return " Then: ".join(describe(scene, s, query, heading=options.heading).text for s in motion.stages)


def _rgb_array(img: QImage) -> np.ndarray:
    import numpy as np

    rgb = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = rgb.width(), rgb.height(), rgb.bytesPerLine()
    return np.frombuffer(rgb.constBits(), np.uint8, count=bpl * h).reshape(h, bpl)[:, : w * 3].reshape(h, w, 3).copy()


def _pil(img: QImage) -> Image.Image:
    from PIL import Image

    return Image.fromarray(_rgb_array(img), "RGB")


def _durations(pictures: list[Picture], fps: int, tick_ms: int) -> list[int]:
    return frame_durations_ms([Frame(p.stages[-1], p.count) for p in pictures], fps, tick_ms)


def gif_bytes(scene: Scene, options: FigureOptions, motion: MotionOptions, width: int, *, query: int) -> bytes:
    """The animation as a GIF: one shared 256-colour palette (no dither, so cells stay flat)."""

    motion = motion.validated()
    if motion.fps > GIF_MAX_FPS:
        raise ValueError(f"a GIF plays at most {GIF_MAX_FPS} frames per second (browsers slow faster ones "
                         f"down), not {motion.fps}: use .apng or .mp4")
    pictures = render_pictures(scene, options, motion, width, query=query, suffix=".gif")
    palette = _shared_palette(pictures)
    quantise = _Quantiser(palette)
    quantised = [quantise(p.image) for p in pictures]
    buf = io.BytesIO()
    extra = {"loop": 0} if motion.loop else {}
    try:
        quantised[0].save(buf, format="GIF", save_all=True, append_images=quantised[1:],
                          duration=_durations(pictures, motion.fps, 10), disposal=1, optimize=False,
                          comment=description(scene, options, motion, query=query).encode("utf-8")[:60000],
                          **extra)
    except (OSError, ValueError) as exc:
        raise OSError(f"the GIF encoder failed ({exc})") from None
    return buf.getvalue()


def _shared_palette(pictures: list[Picture]) -> Image.Image:
    """One palette for every frame, from the stills and a few morph frames: their most frequent colours
    exactly (the background, the cells' fills, the text), the rest by median cut."""
    from PIL import Image

    chosen = [_pil(p.image) for p in pictures if p.still]
    morphs = [p for p in pictures if not p.still]
    chosen += [_pil(p.image) for p in morphs[len(morphs) // 4::max(1, len(morphs) // 4)]]
    w, h = chosen[0].size
    scale = max(1, w // 640)  # a smaller sample quantises as well and much faster
    tiles = [f.reduce(scale) if scale > 1 else f for f in chosen]
    tw, th = tiles[0].size
    sheet = Image.new("RGB", (tw, th * len(tiles)))
    for k, t in enumerate(tiles):
        sheet.paste(t, (0, k * th))
    # (an RGB image's colours are (r, g, b) tuples; as many may be asked for as it has pixels: never None)
    counts = sorted(sheet.getcolors(tw * th * len(tiles)) or [], reverse=True)
    exact = [rgb for _, rgb in counts[:_EXACT_COLOURS] if isinstance(rgb, tuple)]
    rest = sheet.quantize(256 - len(exact), method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    extra = (rest.getpalette() or [])[: 3 * (256 - len(exact))]
    colours = [c for rgb in exact for c in rgb] + extra
    palette = Image.new("P", (1, 1))
    palette.putpalette(colours + [0] * (768 - len(colours)))
    return palette


class _Quantiser:
    """Frames to palette indices, each pixel its nearest palette colour (exact colours stay exact: Pillow's
    own palette lookup is approximate, white came out as 252, 252, 252).  A 24-bit table remembers each
    colour's index, so a colour is searched for once per animation, not once per pixel."""

    def __init__(self, palette: Image.Image) -> None:
        import numpy as np

        self.palette = palette
        self.colours = np.asarray((palette.getpalette() or [])[:768], dtype=np.int32).reshape(-1, 3)
        self.table = np.full(1 << 24, -1, dtype=np.int16)
        codes = (self.colours[:, 0] << 16) | (self.colours[:, 1] << 8) | self.colours[:, 2]
        self.table[codes[::-1]] = np.arange(len(codes) - 1, -1, -1, dtype=np.int16)  # (first entry wins)

    def __call__(self, img: QImage) -> Image.Image:
        import numpy as np
        from PIL import Image

        # an opaque ARGB32 pixel is the uint32 0xffRRGGBB: its low 24 bits are the colour's code
        w, h = img.width(), img.height()
        pixels = np.frombuffer(img.constBits(), np.uint32, count=img.bytesPerLine() // 4 * h)
        codes = (pixels.reshape(h, -1)[:, :w] & 0xFFFFFF).astype(np.int32)
        index = self.table[codes]
        missing = index < 0
        if missing.any():
            new = np.unique(codes[missing])
            cols = np.stack([new >> 16, (new >> 8) & 255, new & 255], axis=1)
            for start in range(0, len(new), 4096):  # (bounded memory for the distance table)
                part = cols[start:start + 4096]
                d = ((part[:, None, :] - self.colours[None, :, :]) ** 2).sum(axis=2)
                self.table[new[start:start + 4096]] = d.argmin(axis=1).astype(np.int16)
            index = self.table[codes]
        out = Image.fromarray(index.astype(np.uint8), "P")
        out.putpalette(self.palette.getpalette() or [])
        return out


#: How many of the most frequent colours a GIF's palette holds exactly (the rest are median cut).
_EXACT_COLOURS = 96


def apng_bytes(scene: Scene, options: FigureOptions, motion: MotionOptions, width: int, *, query: int) -> bytes:
    """The animation as an animated PNG (full colour, ms durations, the alt text as its Description)."""
    from PIL import PngImagePlugin

    motion = motion.validated()
    pictures = render_pictures(scene, options, motion, width, query=query, suffix=".apng")
    frames = [_pil(p.image) for p in pictures]
    info = PngImagePlugin.PngInfo()
    info.add_itxt("Description", description(scene, options, motion, query=query))
    info.add_itxt("Software", "QKV Studio")
    buf = io.BytesIO()
    try:
        frames[0].save(buf, format="PNG", save_all=True, append_images=frames[1:],
                       duration=_durations(pictures, motion.fps, 1), loop=0 if motion.loop else 1,
                       disposal=PngImagePlugin.Disposal.OP_NONE, blend=PngImagePlugin.Blend.OP_SOURCE,
                       pnginfo=info, compress_level=1, default_image=False)
    except (OSError, ValueError) as exc:
        raise OSError(f"the APNG encoder failed ({exc})") from None
    return buf.getvalue()


def mp4_bytes(scene: Scene, options: FigureOptions, motion: MotionOptions, width: int, *, query: int) -> bytes:
    """The animation as an MP4 (H.264, yuv420p, constant frame rate) through imageio-ffmpeg's ffmpeg."""
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ValueError("MP4 export needs imageio-ffmpeg: pip install 'qkv-studio[video]'") from None
    motion = motion.validated()
    pictures = render_pictures(scene, options, motion, width, query=query, suffix=".mp4")
    w, h = pictures[0].image.width(), pictures[0].image.height()
    comment = description(scene, options, motion, query=query).replace("\n", " ")[:4000]
    with tempfile.TemporaryDirectory(prefix="qkv-mp4-") as folder:
        path = os.path.join(folder, "out.mp4")
        writer = imageio_ffmpeg.write_frames(
            path, (w, h), fps=motion.fps, codec="libx264", pix_fmt_in="rgb24", pix_fmt_out="yuv420p",
            quality=None, bitrate=None, macro_block_size=1, ffmpeg_log_level="error",
            output_params=["-crf", "18", "-preset", "veryfast", "-tune", "animation", "-movflags", "+faststart",
                           "-metadata", f"comment={comment}", "-metadata", "title=QKV Studio: attention stages"])
        try:
            writer.send(None)
            for p in pictures:
                data = _rgb_array(p.image).tobytes()
                for _ in range(p.count):
                    writer.send(data)
            writer.close()
        except (OSError, RuntimeError, BrokenPipeError) as exc:
            writer.close()
            raise OSError(f"the MP4 encoder (ffmpeg) failed ({' '.join(str(exc).split())[:200]})") from None
        with open(path, "rb") as f:
            return f.read()
