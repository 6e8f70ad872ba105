"""warble.imaging on real files: each type's metadata blocks cut out with the pixels kept, the
orientation applied, the size limits read from the header, the BlurHash's shape."""

from __future__ import annotations

import io

import pytest
from PIL import Image, PngImagePlugin
from warble import imaging

pytestmark = pytest.mark.unit


def _saved(image: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def _exif(orientation: int = 1) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "HomeCam"
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0)}
    return exif.tobytes()


def _pattern(mode: str = "RGB") -> Image.Image:
    image = Image.new(mode, (40, 30), (10, 20, 30) if mode == "RGB" else (10, 20, 30, 128))
    image.paste((250, 0, 0) if mode == "RGB" else (250, 0, 0, 255), (0, 0, 10, 10))  # top-left
    return image


def test_a_jpeg_loses_exif_gps_xmp_and_comments_and_keeps_its_exact_pixels():
    data = _saved(_pattern(), "JPEG", exif=_exif(), comment=b"at home", xmp=b"<x:xmpmeta/>")
    done = imaging.process(data, "image/jpeg")
    served = Image.open(io.BytesIO(done.original))
    assert dict(served.getexif()) == {} and not {"comment", "xmp", "exif"} & set(served.info)
    assert b"HomeCam" not in done.original and b"at home" not in done.original
    assert served.tobytes() == Image.open(io.BytesIO(data)).tobytes()


@pytest.mark.parametrize(("orientation", "corner"), [(6, (29, 0)), (3, (39, 29)), (8, (0, 39))])
def test_the_exif_orientation_is_applied_and_then_dropped(orientation: int, corner: tuple):
    data = _saved(_pattern(), "JPEG", exif=_exif(orientation), quality=95)
    done = imaging.process(data, "image/jpeg")
    served = Image.open(io.BytesIO(done.original))
    assert served.size == (done.width, done.height)
    assert served.size == ((30, 40) if orientation in (6, 8) else (40, 30))
    red, green, blue = served.convert("RGB").getpixel(corner)
    assert red > 200 and green < 60 and blue < 60  # the red corner moved where it should
    assert dict(served.getexif()) == {}


def test_a_png_loses_its_text_and_exif_chunks_and_keeps_its_pixels():
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "at home")
    info.add_itxt("XML:com.adobe.xmp", "<x:xmpmeta/>")
    data = _saved(_pattern("RGBA"), "PNG", pnginfo=info, exif=_exif())
    done = imaging.process(data, "image/png")
    served = Image.open(io.BytesIO(done.original))
    assert served.info == {} and b"at home" not in done.original and b"HomeCam" not in done.original
    assert served.tobytes() == _pattern("RGBA").tobytes()


def test_a_gif_loses_its_comment_and_a_webp_its_exif_and_xmp():
    gif = _saved(Image.new("P", (8, 8), 3), "GIF", comment=b"at home")
    assert b"at home" not in imaging.process(gif, "image/gif").original
    webp = _saved(_pattern(), "WEBP", exif=_exif(), xmp=b"<x:xmpmeta/>", lossless=True)
    served = imaging.process(webp, "image/webp").original
    assert b"HomeCam" not in served and b"xmpmeta" not in served
    assert Image.open(io.BytesIO(served)).tobytes() == _pattern().tobytes()


def test_the_preview_is_at_most_640_px_and_never_larger_than_the_original():
    big = imaging.process(_saved(Image.new("RGB", (2000, 1000)), "JPEG"), "image/jpeg")
    assert (big.preview_width, big.preview_height) == (640, 320)
    small = imaging.process(_saved(Image.new("RGB", (300, 200)), "PNG"), "image/png")
    assert (small.preview_width, small.preview_height) == (300, 200)
    assert Image.open(io.BytesIO(big.preview)).format == "WEBP"


@pytest.mark.parametrize(("size", "mode"), [((8193, 10), "1"), ((7000, 7000), "1")])
def test_a_header_over_the_limits_is_refused_before_decoding(size: tuple[int, int], mode: str):
    data = _saved(Image.new(mode, size), "PNG")
    with pytest.raises(imaging.ImageRefused) as refused:
        imaging.process(data, "image/png")
    assert refused.value.code == "image_too_large"


@pytest.mark.parametrize(
    ("data", "declared"),
    [(b"GIF89a but then nothing", "image/gif"), (b"hello", "image/jpeg"),
     (b"\\x89PNG\\r\\n\\x1a\\n" + b"\\x00" * 20, "image/png")],
)  # fmt: skip
def test_bytes_that_are_not_a_readable_image_of_the_type_are_refused(data: bytes, declared: str):
    with pytest.raises(imaging.ImageRefused) as refused:
        imaging.process(data, declared)
    assert refused.value.code == "unsupported_image"


def test_a_blurhash_has_4x3_components_and_the_average_colour_first():
    found = imaging.blurhash(Image.new("RGB", (32, 32), (255, 255, 255)))
    # 4x3 components ("L"), the quantised maximum, the DC colour, then 11 AC components
    assert len(found) == 28 and found[0] == "L"
    assert found[2:6] == imaging._base83(0xFFFFFF, 4)


def _apng(frames: int, size: tuple[int, int], declared_frames: int) -> bytes:
    """An animated PNG of ``frames`` distinct frames whose acTL says ``declared_frames``."""
    import struct
    import zlib

    images = []
    for n in range(frames):
        frame = Image.new("L", size, 0)
        frame.paste(255, (n * 10, 0, n * 10 + 10, 10))  # each frame differs from the last
        images.append(frame)
    data = _saved(images[0], "PNG", save_all=True, append_images=images[1:])
    at = data.index(b"acTL")
    body = struct.pack(">II", declared_frames, 0)
    crc = struct.pack(">I", zlib.crc32(b"acTL" + body))
    return data[: at + 4] + body + crc + data[at + 4 + 8 + 4 :]


def test_an_animated_png_counts_the_frames_it_holds_not_those_it_declares():
    """Issue 47 item 6: an APNG declaring one frame but holding more was measured as one."""
    # given 5 frames of 10 MP (50 MP decoded in all, over the 40 MP limit), declared as 1
    lying = _apng(5, (4000, 2500), declared_frames=1)
    assert Image.open(io.BytesIO(lying)).n_frames == 1  # what the header says
    assert imaging.png_frames(lying) >= 5
    # then it is refused before decoding, as the honest file is
    for data in (lying, _apng(5, (4000, 2500), declared_frames=5)):
        with pytest.raises(imaging.ImageRefused) as refused:
            imaging.process(data, "image/png")
        assert refused.value.code == "image_too_large"
    # and a small animation, or a still PNG, is counted right and kept
    assert imaging.png_frames(_apng(3, (40, 30), declared_frames=3)) == 3
    assert imaging.png_frames(_saved(_pattern(), "PNG")) == 1
    assert imaging.process(_apng(3, (40, 30), declared_frames=1), "image/png").width == 40
