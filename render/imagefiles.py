"""Writing frames: PNG (a small zlib writer, no dependency), GIF (Pillow when installed, else a
built-in writer), MP4 (imageio-ffmpeg's ffmpeg when installed, else an ``ffmpeg`` on PATH), or a
folder of numbered PNGs. Frames are (h, w, 3) uint8 arrays, top row first.

A write that fails part-way (a full disk, a folder removed, ffmpeg failing) raises
:class:`WriteFailed`, one line naming the file and why, with the partial file removed (it
raised the OSError's traceback, or, for an .mp4, said it was written and left a corrupt file).
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import numpy as np


# -- failures ---------------------------------------------------------------------------------
class WriteFailed(OSError):
    """An output that could not be written: the message is one line naming the file, the
    reason and what became of the partial file; ``cause`` is the OSError behind it (None
    where ffmpeg failed)."""

    def __init__(self, message: str, cause: OSError | None = None):
        super().__init__(message)
        self.cause = cause

    def __str__(self):
        return self.args[0]


def _remove_partial(path) -> str:
    """Remove what a failed write left at ``path``; says what became of it."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return "nothing was written"
    except OSError as exc:
        return f"the partial file is left there ({exc.strerror or exc})"
    return "the partial file is removed"


def write_failed(path, reason: OSError | str) -> WriteFailed:
    """The WriteFailed for ``path`` (the partial file removed) from an OSError or a reason."""
    cause = reason if isinstance(reason, OSError) else None
    why = (reason.strerror or str(reason)) if cause is not None else reason
    return WriteFailed(f"could not write {path}: {why}; {_remove_partial(path)}", cause)


@contextmanager
def writing(path):
    """Inside, an OSError writing ``path`` becomes a :class:`WriteFailed` (partial file
    removed)."""
    try:
        yield
    except WriteFailed:
        raise
    except OSError as exc:
        raise write_failed(path, exc) from None


# -- PNG --------------------------------------------------------------------------------------
def encode_png(img: np.ndarray, level: int = 6) -> bytes:
    img = np.ascontiguousarray(img, dtype=np.uint8)
    if img.ndim == 2:
        img = img[:, :, None]
    h, w, c = img.shape
    color_type = {1: 0, 3: 2, 4: 6}[c]
    rows = img.reshape(h, w * c)
    up = rows.copy()
    up[1:] = rows[1:] - rows[:-1]                      # PNG "Up" filter, modulo 256
    raw = np.concatenate([np.full((h, 1), 2, np.uint8), up], axis=1)
    raw[0, 0] = 0                                      # first row unfiltered
    raw[0, 1:] = rows[0]

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + chunk(b"IEND", b""))


def write_png(path, img: np.ndarray):
    """Write ``img`` as a PNG file; WriteFailed (partial file removed) if it cannot."""
    data = encode_png(img)
    with writing(path):
        Path(path).write_bytes(data)


def read_png(path) -> np.ndarray:
    """Decode an 8-bit, non-interlaced grey/RGB/RGBA PNG (enough for the files we write and
    for tests); returns (h, w, c) uint8."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, color_type, _, _, interlace = header
    if depth != 8 or interlace or color_type not in (0, 2, 6):
        raise ValueError("only 8-bit non-interlaced grey/RGB/RGBA PNGs are supported")
    c = {0: 1, 2: 3, 6: 4}[color_type]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, w * c + 1)
    out = np.zeros((h, w * c), np.int32)
    prev = np.zeros(w * c, np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 255
        else:
            cur = np.zeros_like(line)
            for x in range(w * c):
                a = cur[x - c] if x >= c else 0
                b = prev[x]
                cc = prev[x - c] if x >= c else 0
                if f == 1:
                    p = a
                elif f == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - cc), abs(a - cc), abs(a + b - 2 * cc)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
                cur[x] = (line[x] + p) & 255
        out[y] = cur
        prev = cur
    return out.astype(np.uint8).reshape(h, w, c)


# -- GIF --------------------------------------------------------------------------------------
_LEVELS = (6, 7, 6)          # fixed 252-colour palette for the built-in writer
_BAYER = np.array([[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]]) / 16.0 - 0.5


def _fixed_palette() -> np.ndarray:
    r, g, b = (np.linspace(0, 255, n) for n in _LEVELS)
    R, G, B = np.meshgrid(r, g, b, indexing="ij")
    pal = np.zeros((256, 3), np.uint8)
    pal[:252] = np.stack([R, G, B], -1).reshape(-1, 3).round()
    return pal


def _quantize_fixed(img: np.ndarray) -> np.ndarray:
    h, w, _ = img.shape
    d = np.tile(_BAYER, (h // 4 + 1, w // 4 + 1))[:h, :w, None]
    idx = []
    for ch, n in enumerate(_LEVELS):
        v = img[:, :, ch:ch + 1] / 255.0 * (n - 1) + d
        idx.append(np.clip(np.round(v), 0, n - 1).astype(np.int64)[:, :, 0])
    return (idx[0] * _LEVELS[1] * _LEVELS[2] + idx[1] * _LEVELS[2] + idx[2]).astype(np.uint8)


def _lzw_uncompressed(indices: np.ndarray) -> bytes:
    """LZW stream with 9-bit literal codes only (a clear code every 250 literals keeps the
    decoder's code width at 9 bits): valid GIF data without a compression loop in Python."""
    lit = indices.reshape(-1).astype(np.int64)
    n = len(lit)
    per = 250
    groups = -(-n // per)
    codes = np.full(groups * (per + 1), -1, np.int64)
    codes[:: per + 1] = 256                                  # clear
    pos = np.arange(n)
    codes[pos + pos // per + 1] = lit
    codes = np.r_[codes[codes >= 0], 257]                    # end of information
    bits = ((codes[:, None] >> np.arange(9)) & 1).astype(np.uint8).reshape(-1)
    data = np.packbits(bits, bitorder="little").tobytes()
    blocks = b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                      for i in range(0, len(data), 255))
    return bytes([8]) + blocks + b"\x00"


# A GIF stores each frame's delay in whole centiseconds, and players show a delay under 2 cs
# as 10 cs: 50 frames per second is the most a GIF plays as written.
MAX_GIF_FPS = 50


def check_gif_fps(fps, option: str = "fps") -> float:
    """``fps`` (frames per second) if a GIF can play it: above 0 and at most 50; ValueError
    naming ``option`` otherwise."""
    fps = float(fps)
    if not 0 < fps <= MAX_GIF_FPS:
        raise ValueError(f"{option} must be above 0 and at most {MAX_GIF_FPS} for a GIF (its "
                         f"frame delays are whole hundredths of a second, and players slow "
                         f"down delays under 2 of them), got {fps:g}; write .mp4 for more")
    return fps


def _gif_clock(k: int, fps: float) -> int:
    """When frame k starts, in whole centiseconds: k / fps, to the nearest."""
    return int(math.floor(100.0 * k / fps + 0.5))


def gif_delays(count: int, fps: float) -> list[int]:
    """The stored delays (cs) of ``count`` frames at ``fps``: each the step of the rounded
    clock, so frame k starts within half a centisecond of k / fps and the delays sum to the
    clip's length count / fps within half a centisecond (30 fps: 3, 4, 3, 3, 4, 3, ...;
    one fixed round(100 / fps) = 3 cs played 30 fps at 33 fps, 10 % fast)."""
    return [_gif_clock(k + 1, fps) - _gif_clock(k, fps) for k in range(count)]


# A GIF frame has at most 256 colours. One median cut over the whole frame spends nearly all of
# them on the sky and ground shades, which cover most pixels, and merges the few coloured
# bodies (the cradle at 400x225: two balls came out the same rose, blue turned teal; body
# pixels were off by 16 per channel on average, up to 90). So the coloured pixels get their
# own share of the palette.
GIF_COLOURS = 255
COLOURED_SHARE = 128          # palette entries for the coloured pixels, when a frame has any


def coloured_pixels(frame: np.ndarray) -> np.ndarray:
    """(h, w) bool: the pixels of clear colour (HSV saturation over 0.3, value over 0.2): the
    bodies (their colours are saturated 0.55-0.7) and the axis lines, not the grey and pale
    blue sky, ground, grid and static bodies."""
    f = frame.astype(np.float32)
    brightest, dimmest = f.max(axis=-1), f.min(axis=-1)
    saturation = (brightest - dimmest) / np.maximum(brightest, 1.0)
    return (saturation > 0.3) & (brightest > 0.2 * 255)


def _rgb_keys(pixels: np.ndarray) -> np.ndarray:
    """One int32 per (n, 3) uint8 pixel, 0xRRGGBB (np.unique on rows is many times slower)."""
    pixels = pixels.astype(np.int32)
    return (pixels[:, 0] << 16) | (pixels[:, 1] << 8) | pixels[:, 2]


def _palette_of(pixels: np.ndarray, colours: int, method) -> np.ndarray:
    """Up to ``colours`` (k, 3) uint8 palette entries for an (n, 3) set of pixels: those
    Pillow's quantizer ``method`` uses (fewer where the pixels have fewer distinct colours)."""
    from PIL import Image
    paletted = Image.fromarray(np.ascontiguousarray(pixels[None])).quantize(
        colors=colours, method=method, dither=Image.Dither.NONE)
    entries = np.asarray(paletted.getpalette(), np.uint8).reshape(-1, 3)
    used = np.bincount(np.asarray(paletted).reshape(-1), minlength=len(entries)) > 0
    return entries[used[:len(entries)]]


def gif_palette(frame: np.ndarray) -> np.ndarray:
    """A (k <= 255, 3) uint8 palette for one frame, made apart for its coloured pixels
    (``COLOURED_SHARE`` entries) and the rest (the remaining entries).

    The coloured pixels (the bodies' shaded faces: ~50 000 distinct colours in a 1280x720
    frame of marbles) by Pillow's octree, 7 ms and 9.2 per channel off, where its median cut
    took 0.32 s for 10.0; the rest (sky, ground, grid: smooth shades) by median cut of every
    fourth pixel, 34 ms where all of them took 84, for the same error."""
    from PIL import Image
    pixels = frame.reshape(-1, 3)
    coloured = coloured_pixels(frame).reshape(-1)
    parts = []
    if coloured.any():
        parts.append(_palette_of(pixels[coloured], COLOURED_SHARE, Image.Quantize.FASTOCTREE))
    if not coloured.all():
        parts.append(_palette_of(pixels[~coloured][::4], GIF_COLOURS - sum(map(len, parts)),
                                 Image.Quantize.MEDIANCUT))
    return np.concatenate(parts)


def nearest_palette_indices(frame: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """(h, w) uint8: each pixel's nearest palette entry (squared RGB distance), worked out
    once per distinct colour in the frame."""
    from scipy.spatial import cKDTree
    distinct, which = np.unique(_rgb_keys(frame.reshape(-1, 3)), return_inverse=True)
    colours = np.stack([distinct >> 16, (distinct >> 8) & 255, distinct & 255], axis=-1)
    # (a k-d tree of the entries: 20 times faster than all the distances for a 1280x720
    # frame; Pillow's own mapping onto a given palette is faster still but not the nearest,
    # twice the error)
    nearest = cKDTree(palette.astype(float)).query(colours.astype(float))[1].astype(np.uint8)
    return nearest[which.reshape(-1)].reshape(frame.shape[:2])


def _paletted_frame(frame: np.ndarray):
    """A Pillow 'P' image of ``frame`` on its ``gif_palette`` (no dithering)."""
    from PIL import Image
    palette = gif_palette(frame)
    image = Image.fromarray(nearest_palette_indices(frame, palette), mode="P")
    image.putpalette(palette.reshape(-1).tolist())
    return image


class GifWriter:
    """Streams frames into an animated GIF at ``fps`` frames per second (at most 50: see
    ``gif_delays``). Uses Pillow (adaptive palettes, real LZW) when it is installed;
    otherwise a built-in writer with a fixed dithered palette and uncompressed LZW codes
    (bigger files, no dependency)."""

    def __init__(self, path, fps: float, use_pillow: bool | None = None):
        self.path = str(path)
        self.fps = check_gif_fps(fps)
        if use_pillow is None:
            use_pillow = importlib.util.find_spec("PIL") is not None
        self.use_pillow = use_pillow
        self.frames = []
        self._f = None
        self.count = 0
        self._size = None

    def append(self, frame: np.ndarray):
        frame = np.ascontiguousarray(frame[:, :, :3], dtype=np.uint8)
        self.count += 1
        if self.use_pillow:
            self.frames.append(_paletted_frame(frame))
            return
        h, w, _ = frame.shape
        if self._f is not None and (w, h) != self._size:
            raise ValueError("all GIF frames must have the same size")
        with self._writing():
            if self._f is None:
                self._size = (w, h)
                self._f = open(self.path, "wb")
                self._f.write(b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0))
                self._f.write(_fixed_palette().tobytes())
                self._f.write(b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")  # loop
            k = self.count - 1                                   # this frame's index
            delay = _gif_clock(k + 1, self.fps) - _gif_clock(k, self.fps)
            self._f.write(b"\x21\xf9\x04\x04" + struct.pack("<H", delay) + b"\x00\x00")
            self._f.write(b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0))
            self._f.write(_lzw_uncompressed(_quantize_fixed(frame)))

    def close(self):
        if self.use_pillow:
            frames, self.frames = self.frames, []
            if frames:
                milliseconds = [10 * d for d in gif_delays(len(frames), self.fps)]
                with writing(self.path):
                    frames[0].save(self.path, save_all=True, append_images=frames[1:],
                                   duration=milliseconds, loop=0, optimize=False, disposal=1)
        elif self._f is not None:
            with self._writing():
                self._f.write(b"\x3b")
                self._f.close()
            self._f = None

    @contextmanager
    def _writing(self):
        """The built-in writer's file writes: on an OSError the file is closed and removed
        (WriteFailed), and close does nothing more."""
        try:
            yield
        except OSError as exc:
            if self._f is not None:
                try:
                    self._f.close()
                except OSError:
                    pass               # (the close flushes into the same full disk)
            self._f = None
            raise write_failed(self.path, exc) from None


def gif_frame_count(path) -> int:
    """Number of images in a GIF (walks the block structure; no decoding)."""
    return len(gif_frame_delays(path))


def gif_frame_delays(path) -> list[int]:
    """Each image's delay in a GIF, in centiseconds (0 for an image without a graphic
    control block); walks the block structure, no decoding."""
    data = Path(path).read_bytes()
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise ValueError(f"{path} is not a GIF file")
    flags = data[10]
    pos = 13 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0)
    delays, delay = [], 0

    def skip_blocks(p):
        while data[p]:
            p += data[p] + 1
        return p + 1

    while pos < len(data):
        b = data[pos]
        if b == 0x3B:
            break
        if b == 0x21:
            if data[pos + 1] == 0xF9:                     # graphic control: the next delay
                delay = struct.unpack("<H", data[pos + 4:pos + 6])[0]
            pos = skip_blocks(pos + 2)
        elif b == 0x2C:
            delays.append(delay)
            delay = 0
            f = data[pos + 9]
            pos += 10 + (3 * 2 ** ((f & 7) + 1) if f & 0x80 else 0)
            pos = skip_blocks(pos + 1)
        else:
            raise ValueError(f"bad GIF block 0x{b:02x} at {pos}")
    return delays


# -- MP4 --------------------------------------------------------------------------------------
MP4_NEEDS_FFMPEG = ("writing .mp4 needs ffmpeg: pip install -e '.[video]' (imageio-ffmpeg, which "
                    "ships its own ffmpeg), or install ffmpeg; or write .gif / PNG frames")


def check_mp4_encoder():
    """A ValueError (one line) where nothing can write .mp4: neither imageio-ffmpeg (the
    [video] extra) nor an ``ffmpeg`` on PATH; checked before any frame is rendered."""
    if importlib.util.find_spec("imageio_ffmpeg") is None and shutil.which("ffmpeg") is None:
        raise ValueError(MP4_NEEDS_FFMPEG)


def _ffmpeg_exe() -> str:
    """imageio-ffmpeg's ffmpeg (the [video] extra), else one on PATH."""
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except ImportError:
        pass
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise RuntimeError(MP4_NEEDS_FFMPEG)
    return exe


class Mp4Writer:
    """H.264 MP4 (CRF 15, yuv420p) through ffmpeg, imageio-ffmpeg's or one on PATH, fed raw
    frames on a pipe. Odd frame sizes are padded by one pixel (yuv420p needs even sizes).
    ffmpeg's exit status is checked: imageio-ffmpeg's ``write_frames`` ignored it, so a disk
    filling up while the file was written left a corrupt .mp4 and a report that it was
    written; now that, or a pipe ffmpeg stopped reading, is a WriteFailed naming ffmpeg's
    last error line, the partial file removed."""

    CRF = 15           # (imageio-ffmpeg's quality 7, which this writer used through it)

    def __init__(self, path, fps: float):
        self.path = str(path)
        self.fps = fps
        self._proc = None
        self._log = None
        self.count = 0

    def _start(self, w, h):
        fps = str(Fraction(self.fps).limit_denominator())     # (30000/1001 stays exact)
        self._log = tempfile.TemporaryFile()          # (a pipe ffmpeg could fill and block on)
        self._proc = subprocess.Popen(
            [_ffmpeg_exe(), "-y", "-loglevel", "error", "-f", "rawvideo", "-vcodec", "rawvideo",
             "-s", f"{w}x{h}", "-pix_fmt", "rgb24", "-r", fps, "-i", "-", "-an",
             "-vcodec", "libx264", "-pix_fmt", "yuv420p", "-crf", str(self.CRF), self.path],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log)

    def append(self, frame: np.ndarray):
        frame = np.ascontiguousarray(frame[:, :, :3], dtype=np.uint8)
        h, w, _ = frame.shape
        if h % 2 or w % 2:
            frame = np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")
            h, w = frame.shape[:2]
        if self._proc is None:
            self._start(w, h)
        try:
            self._proc.stdin.write(frame.tobytes())
        except OSError:              # (ffmpeg has stopped: a full disk, a bad path)
            self._finish()
            raise self._failure() from None
        self.count += 1

    def close(self):
        if self._proc is None:
            return
        if self._finish() != 0:
            raise self._failure()
        self._log.close()

    def _finish(self) -> int:
        """Close ffmpeg's input, wait for it; its exit status."""
        proc, self._proc = self._proc, None
        try:
            proc.stdin.close()
        except OSError:
            pass
        self._status = proc.wait()
        return self._status

    def _failure(self) -> WriteFailed:
        self._log.seek(0)
        lines = [line.strip() for line in
                 self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        self._log.close()
        # the first line: the cause (the rest follow from it, ending "Nothing was written
        # into output file ..."); without its "[out#0/mp4 @ 0x55648abc4400] "
        reason = (re.sub(r"^\[[^\]]*\]\s*", "", lines[0]) if lines
                  else f"ffmpeg exited with status {self._status}")
        return write_failed(self.path, f"ffmpeg: {reason}")


# the frames FolderWriter writes, and the only files of a folder it removes
FRAME_NAME = re.compile(r"frame_\d{5,}\.png")


class FolderWriter:
    """Numbered PNGs ``frame_00000.png`` ... in a folder (created). Frames of that name
    already there are removed first (``removed`` counts them): left, a shorter render's
    frames were followed by an earlier one's, and a video of frame_*.png mixed the two.
    A folder holding other files is refused (``check_frames_folder``)."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        check_frames_folder(self.path)
        stale = [f for f in self.path.iterdir() if FRAME_NAME.fullmatch(f.name) and f.is_file()]
        for frame in stale:
            frame.unlink()
        self.removed = len(stale)
        self.count = 0

    def append(self, frame):
        try:
            write_png(self.path / f"frame_{self.count:05d}.png", frame)
        except WriteFailed as exc:
            kept = ("" if self.count == 0 else f"; frame_00000.png to "
                    f"frame_{self.count - 1:05d}.png before it are kept")
            raise WriteFailed(str(exc) + kept, exc.cause) from None
        self.count += 1

    def close(self):
        pass


def check_output(out, option: str = "out") -> str:
    """The kind of output ``out`` names (see ``output_kind``), checked before any work: the
    folder it goes in must exist (a folder of frames is made, but not its parent), and an
    .mp4 needs ffmpeg (``check_mp4_encoder``). ValueError naming ``option`` otherwise."""
    kind = output_kind(out, option)        # (its message names the option once)
    if kind == "mp4":
        try:
            check_mp4_encoder()
        except ValueError as exc:
            raise ValueError(f"{option}: {exc}") from None
    path = os.path.abspath(str(out))        # (abspath drops a folder's trailing separator)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ValueError(f"{option}: the folder {folder!r} does not exist")
    if kind == "folder" and os.path.isdir(path):
        check_frames_folder(path, option)
    return kind


def check_frames_folder(path, option: str = "out"):
    """Refuse (ValueError naming ``option``) a folder for frames that holds anything but an
    earlier render's frame_NNNNN.png: frames written among other files (``--out shots``
    for ``--out shots.gif``) mixed a thousand PNGs into someone's folder."""
    others = sorted(entry.name for entry in os.scandir(path)
                    if not (FRAME_NAME.fullmatch(entry.name) and entry.is_file()))
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3
                                         else "")
        raise ValueError(f"{option}: the folder {str(path)!r} already holds other "
                         f"files ({shown}); give a new or empty folder for the frames, or "
                         f"a name ending in .png, .gif or .mp4")


def output_kind(out, option: str = "out") -> str:
    """'png', 'gif', 'mp4' or 'folder' from an output path (a path ending in a separator or
    without a suffix is a folder of PNGs); ValueError naming ``option`` for another suffix."""
    s = str(out)
    if s.endswith(("/", os.sep)):
        return "folder"
    suffix = Path(s).suffix.lower()
    if suffix == "":
        return "folder"
    if suffix in (".png", ".gif", ".mp4"):
        return suffix[1:]
    raise ValueError(f"{option} must end in .png, .gif or .mp4, or name a folder for PNG "
                     f"frames; got {out!r}")
