"""Images as the MediaFunction serves them (Pillow): the type read from the bytes, the size
limits checked on the header before any decode, every metadata block removed, the EXIF
orientation applied, a preview of at most 640 px and its BlurHash.

The served original keeps its pixels exactly: without an orientation to apply, the metadata is cut
out of the file's own blocks (JPEG segments, PNG chunks, GIF extensions, WebP chunks) and nothing
is decoded or encoded again; only a rotated image is encoded anew. Pillow rather than libvips
(pyvips): docs/media.md has the measurements behind the choice.
"""

from __future__ import annotations

import io
import math
import struct
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

MAX_SIDE = 8192
MAX_PIXELS = 40_000_000
PREVIEW_SIDE = 640
PREVIEW_TYPE = "image/webp"
EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
_FORMATS = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF", "image/webp": "WEBP"}
_ORIENTATION = 0x0112
TOO_LARGE = (
    f"The image is larger than {MAX_SIDE} px a side or {MAX_PIXELS // 1_000_000} megapixels."
)


class ImageRefused(Exception):
    """The bytes are not a servable image of the declared type; ``code`` is API.md's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ProcessedImage:
    original: bytes  # the declared type, no metadata, orientation applied
    width: int
    height: int
    preview: bytes  # PREVIEW_TYPE
    preview_width: int
    preview_height: int
    blurhash: str


def sniff(data: bytes) -> str | None:
    """The image type the bytes are, by their signature (not by any name), or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def process(data: bytes, declared: str) -> ProcessedImage:
    """The served original and preview of ``data``, declared as ``declared``; raises
    ImageRefused (unsupported_image, image_too_large) for anything else."""
    from PIL import Image, UnidentifiedImageError

    found = sniff(data)
    if found is None:
        raise ImageRefused("unsupported_image", "The file is not a JPEG, PNG, GIF or WebP image.")
    if found != declared:
        raise ImageRefused(
            "unsupported_image", f"The file is {found}, not the declared {declared}."
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image: Any = Image.open(io.BytesIO(data), formats=[_FORMATS[declared]])
            width, height = image.size
            frames = getattr(image, "n_frames", 1)
            if declared == "image/png":
                # acTL's count is the file's word; browsers play every frame it holds.
                frames = max(frames, png_frames(data))
            # The header alone: nothing is decoded until the size is known to be safe.
            if max(width, height) > MAX_SIDE or width * height * frames > MAX_PIXELS:
                raise ImageRefused(
                    "image_too_large", f"{TOO_LARGE} This one is {width}x{height} px."
                )
            orientation = _orientation(image) if frames == 1 else 1
            if orientation == 1:
                original = strip_metadata(data, declared)
            else:
                original, turned = _reoriented(image, declared, orientation)
                width, height = turned.size
                del turned
                # The preview from a file of its own, decoded small as an upright one is.
                image = Image.open(io.BytesIO(data), formats=[_FORMATS[declared]])
            preview, size = _preview(image, orientation)
    except ImageRefused:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageRefused("unsupported_image", f"The image cannot be read: {exc}.") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefused("image_too_large", TOO_LARGE) from None
    return ProcessedImage(original, width, height, preview[0], size[0], size[1], preview[1])


def _orientation(image: Image) -> int:
    try:
        value = int(image.getexif().get(_ORIENTATION, 1))
    except (ValueError, TypeError, OSError, SyntaxError):
        return 1
    return value if 1 <= value <= 8 else 1


_TRANSPOSES = {2: 0, 3: 3, 4: 1, 5: 5, 6: 4, 7: 6, 8: 2}  # orientation -> Image.Transpose


def _transposed(image: Image, orientation: int) -> Image:
    from PIL.Image import Transpose

    if orientation == 1:
        return image
    return image.transpose(Transpose(_TRANSPOSES[orientation]))


def _reoriented(image: Any, declared: str, orientation: int) -> tuple[bytes, Image]:
    """A rotated single-frame image, encoded anew in its own type without metadata (the JPEG
    with its own quantisation tables and subsampling, so its quality stays as it was)."""
    from PIL import JpegImagePlugin

    source = image
    options: dict[str, object] = {}
    icc = source.info.get("icc_profile")
    if icc:
        options["icc_profile"] = icc  # colour, not metadata about the photo
    if declared == "image/jpeg":
        options["qtables"] = source.quantization
        options["subsampling"] = JpegImagePlugin.get_sampling(source)
    elif declared == "image/webp":
        options["lossless"] = bool(source.info.get("lossless"))
        options["quality"] = 95
    turned = _transposed(source, orientation)
    turned.info = {}  # Pillow would write the comment back
    out = io.BytesIO()
    turned.save(out, format=_FORMATS[declared], **options)
    return out.getvalue(), turned


def _preview(image: Any, orientation: int) -> tuple[tuple[bytes, str], tuple[int, int]]:
    """The preview (first frame, turned upright) and the BlurHash of a 32 px copy of it."""
    from PIL.Image import Resampling

    source = image
    if getattr(source, "format", None) == "JPEG":
        # Decode at the smallest DCT scale that still covers the preview (1/2 .. 1/8).
        w, h = source.size
        scale = PREVIEW_SIDE / max(w, h)
        if scale < 1:
            source.draft("RGB", (math.ceil(w * scale), math.ceil(h * scale)))
    frame = source.convert("RGBA" if _has_alpha(source) else "RGB")
    frame.thumbnail((PREVIEW_SIDE, PREVIEW_SIDE), Resampling.LANCZOS, reducing_gap=3.0)
    frame = _transposed(frame, orientation)
    out = io.BytesIO()
    frame.save(out, format="WEBP", quality=80, method=4)
    small = frame.copy()
    small.thumbnail((32, 32), Resampling.BILINEAR)
    return (out.getvalue(), blurhash(small.convert("RGB"))), frame.size


def _has_alpha(image: Image) -> bool:
    mode = getattr(image, "mode", "")
    return mode in ("RGBA", "LA", "PA") or "transparency" in getattr(image, "info", {})


# ---- metadata removal, block by block ------------------------------------------------------
def strip_metadata(data: bytes, content_type: str) -> bytes:
    """The file without its metadata blocks (EXIF and GPS, XMP, IPTC, comments, text), its
    image data byte for byte as it was."""
    return {
        "image/jpeg": _strip_jpeg,
        "image/png": _strip_png,
        "image/gif": _strip_gif,
        "image/webp": _strip_webp,
    }[content_type](data)


# APP2 ICC_PROFILE (colour) and APP14 Adobe (how to read the colour channels) are kept; every
# other APPn (JFIF and its thumbnail, EXIF, XMP, IPTC, maker notes) and COM go.
def _keep_jpeg_segment(marker: int, body: bytes) -> bool:
    if marker == 0xFE:
        return False
    if 0xE0 <= marker <= 0xEF:
        return (marker == 0xE2 and body.startswith(b"ICC_PROFILE\x00")) or (
            marker == 0xEE and body.startswith(b"Adobe")
        )
    return True


def _is_marker(first: int, second: int) -> bool:
    """A marker inside entropy-coded data: FF, then neither a stuffed 00 nor RSTn (nor fill)."""
    return first == 0xFF and second not in (0x00, 0xFF) and not 0xD0 <= second <= 0xD7


def _strip_jpeg(data: bytes) -> bytes:
    out = bytearray(b"\xff\xd8")
    i, n = 2, len(data)
    while i < n:
        if data[i] != 0xFF:
            raise ValueError("broken JPEG segment")
        marker = data[i + 1] if i + 1 < n else 0xD9
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0xD9:
            out += b"\xff\xd9"
            return bytes(out)
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            out += data[i : i + 2]
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        end = i + 2 + length
        if end > n:
            raise ValueError("truncated JPEG segment")
        if _keep_jpeg_segment(marker, data[i + 4 : end]):
            out += data[i:end]
        i = end
        if marker == 0xDA:  # entropy-coded data up to the next marker that is not RSTn or 00
            j = i
            while True:  # to the next FF (find runs at C speed), then whether a marker starts
                j = data.find(b"\xff", j)
                if j < 0 or j + 1 >= n:
                    j = n
                    break
                if _is_marker(0xFF, data[j + 1]):
                    break
                j += 1
            out += data[i:j]
            i = j
    raise ValueError("JPEG without an end")


_PNG_KEPT = {
    b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"cHRM", b"gAMA", b"iCCP", b"sBIT", b"sRGB",
    b"cICP", b"acTL", b"fcTL", b"fdAT",
}  # fmt: skip


def png_frames(data: bytes) -> int:
    """The frames a PNG really holds: its frame controls (``fcTL``), whatever its animation
    control (``acTL``) declares (issue 47 item 6: one frame declared, 60 of 40 MP held, which a
    browser plays all the same); 1 for a still image."""
    count, i = 0, 8
    while i + 8 <= len(data):
        (length,) = struct.unpack(">I", data[i : i + 4])
        kind = data[i + 4 : i + 8]
        if kind == b"fcTL":
            count += 1
        elif kind == b"IEND":
            break
        i += 12 + length
    return max(count, 1)


def _strip_png(data: bytes) -> bytes:
    out = bytearray(data[:8])
    i = 8
    while i + 8 <= len(data):
        (length,) = struct.unpack(">I", data[i : i + 4])
        kind = data[i + 4 : i + 8]
        end = i + 12 + length
        if end > len(data):
            raise ValueError("truncated PNG chunk")
        if kind in _PNG_KEPT:
            out += data[i:end]
        i = end
        if kind == b"IEND":
            return bytes(out)
    raise ValueError("PNG without an end")


def _gif_sub_blocks(data: bytes, i: int) -> int:
    """The index after a run of sub-blocks starting at ``i``."""
    while True:
        size = data[i]
        i += 1 + size
        if size == 0:
            return i


def _strip_gif(data: bytes) -> bytes:
    flags = data[10]
    i = 13 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0)
    out = bytearray(data[:i])
    while i < len(data):
        block = data[i]
        if block == 0x3B:
            out.append(0x3B)
            return bytes(out)
        if block == 0x2C:  # image: descriptor, local colour table, LZW size, data
            local = data[i + 9]
            start = i
            i += 10 + (3 * 2 ** ((local & 7) + 1) if local & 0x80 else 0) + 1
            i = _gif_sub_blocks(data, i)
            out += data[start:i]
            continue
        if block != 0x21:
            raise ValueError("broken GIF block")
        label, start = data[i + 1], i
        i = _gif_sub_blocks(data, i + 2)
        application = data[start + 3 : start + 14] if label == 0xFF else b""
        # Comments and application blocks (XMP) go; the animation loop count stays.
        if label not in (0xFE, 0xFF) or application in (b"NETSCAPE2.0", b"ANIMEXTS1.0"):
            out += data[start:i]
    raise ValueError("GIF without an end")


def _strip_webp(data: bytes) -> bytes:
    chunks = bytearray()
    i = 12
    while i + 8 <= len(data):
        kind = data[i : i + 4]
        (length,) = struct.unpack("<I", data[i + 4 : i + 8])
        end = i + 8 + length + (length & 1)
        if kind == b"VP8X":
            body = bytearray(data[i + 8 : i + 8 + length])
            body[0] &= ~0x0C & 0xFF  # no EXIF (0x08), no XMP (0x04) any more
            chunks += data[i : i + 8] + body + data[i + 8 + length : end]
        elif kind not in (b"EXIF", b"XMP "):
            chunks += data[i:end]
        i = end
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WEBP" + bytes(chunks)


# ---- BlurHash (https://blurha.sh), as Mastodon's API gives it ------------------------------
_B83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~"


def _base83(value: int, length: int) -> str:
    return "".join(_B83[(value // 83 ** (length - i - 1)) % 83] for i in range(length))


def _linear(channel: int) -> float:
    v = channel / 255
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def _srgb(value: float) -> int:
    v = max(0.0, min(1.0, value))
    return round((v * 12.92 if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055) * 255)


def _sign_pow(value: float, exp: float) -> float:
    return math.copysign(abs(value) ** exp, value)


def blurhash(image: Image, x_components: int = 4, y_components: int = 3) -> str:
    """The BlurHash of a small RGB image (a 32 px thumbnail is plenty)."""
    width, height = image.size
    raw = image.tobytes()
    table = [_linear(c) for c in range(256)]
    linear = [(table[raw[i]], table[raw[i + 1]], table[raw[i + 2]]) for i in range(0, len(raw), 3)]
    cos_x = [[math.cos(math.pi * i * x / width) for x in range(width)] for i in range(x_components)]
    cos_y = [
        [math.cos(math.pi * j * y / height) for y in range(height)] for j in range(y_components)
    ]
    factors = []
    for j in range(y_components):
        for i in range(x_components):
            norm = (1 if i == j == 0 else 2) / (width * height)
            r = g = b = 0.0
            for y in range(height):
                row, cy = y * width, cos_y[j][y]
                for x in range(width):
                    basis = cos_x[i][x] * cy
                    pr, pg, pb = linear[row + x]
                    r += basis * pr
                    g += basis * pg
                    b += basis * pb
            factors.append((r * norm, g * norm, b * norm))
    dc, ac = factors[0], factors[1:]
    out = _base83((x_components - 1) + (y_components - 1) * 9, 1)
    if ac:
        actual_max = max(abs(v) for f in ac for v in f)
        quantised = max(0, min(82, math.floor(actual_max * 166 - 0.5)))
        maximum = (quantised + 1) / 166
        out += _base83(quantised, 1)
    else:
        maximum = 1.0
        out += _base83(0, 1)
    out += _base83((_srgb(dc[0]) << 16) + (_srgb(dc[1]) << 8) + _srgb(dc[2]), 4)
    for f in ac:
        q = [max(0, min(18, math.floor(_sign_pow(v / maximum, 0.5) * 9 + 9.5))) for v in f]
        out += _base83(q[0] * 19 * 19 + q[1] * 19 + q[2], 2)
    return out
