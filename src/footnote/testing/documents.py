"""Small real documents for tests: a one-page PDF with a text layer, written with reportlab (a dev dependency)."""

from __future__ import annotations

from pathlib import Path


def text_pdf(path: Path, lines: list[str], *, page: str = "A4", top: float = 800, left: float = 20) -> Path:
    """Write ``lines`` one under another (16 pt apart) on one ``page`` (a reportlab page size name), starting at
    ``top`` points from the bottom and ``left`` from the edge; deterministic bytes (``invariant``)."""
    from reportlab.lib import pagesizes
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=getattr(pagesizes, page), invariant=1)
    y = top
    for line in lines:
        c.drawString(left, y, line)
        y -= 16
    c.save()
    return path


def video_from_audio(audio: Path, out: Path, *, size: tuple[int, int] = (160, 120), rate: int = 22050) -> Path:
    """A real video (``out``: .mp4 H.264 + AAC, .webm VP8 + Opus, by its suffix) of a grey picture at one frame a
    second and the sound of ``audio``, re-encoded with PyAV (what the project decodes recordings with)."""
    from fractions import Fraction

    import av
    import numpy as np

    webm = out.suffix.lower() == ".webm"
    rate = 48000 if webm else rate
    src = av.open(str(audio))
    dst = av.open(str(out), "w")
    try:
        v = dst.add_stream("libvpx" if webm else "libx264", rate=1)
        v.width, v.height, v.pix_fmt = size[0], size[1], "yuv420p"
        a = dst.add_stream("libopus" if webm else "aac", rate=rate)
        resampler = av.AudioResampler(format="s16" if webm else "fltp", layout="mono", rate=rate)
        seconds = 0.0
        for frame in src.decode(audio=0):
            for f in resampler.resample(frame):
                seconds = max(seconds, float((f.pts or 0) / rate) + f.samples / rate)
                for p in a.encode(f):
                    dst.mux(p)
        for p in a.encode(None):
            dst.mux(p)
        grey = np.full((size[1], size[0], 3), 90, np.uint8)
        for i in range(int(seconds) + 1):
            vf = av.VideoFrame.from_ndarray(grey, format="rgb24")
            vf.pts, vf.time_base = i, Fraction(1, 1)
            for p in v.encode(vf):
                dst.mux(p)
        for p in v.encode(None):
            dst.mux(p)
    finally:
        dst.close()
        src.close()
    return out
