"""Media: processing a 12-megapixel photo, and a home page of tweets with images.

Processing: ``warble.imaging.process`` (what the MediaFunction runs on an upload, Pillow) on a
4000 x 3000 JPEG as a phone writes it (EXIF with GPS), upright and with an orientation to apply,
against Pillow's own decode + save of the same file in the same run (its floor: a decode and an
encode), with libvips (pyvips, pyvips-binary) doing the same work beside it. Peak memory is each
case's peak resident set in a fresh process (VmHWM, reset after the imports) over its resident
set just before the call, so the libraries' own buffers count, which tracemalloc does not see.

Home page: ``GET /v1/timeline/home?limit=20`` through the TweetsFunction handler, warm, for a
reader whose page holds 20 tweets with 4 images each, against the same read for a reader whose
20 tweets have none (goal: within 1.2x, with the same round trips: a tweet keeps what it shows
of its media, so no read of the media table). Set-up shortcut: the 80 media are written ready
(MediaTable.create, then finish) instead of being uploaded and processed.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from bench import stack
from bench.accounts import expect
from bench.harness import Benchmark, Item, Run, group
from bench.timeline import PAGE, PASSWORD, home_event, make_user

WIDTH, HEIGHT = 4000, 3000  # 12 megapixels
GOAL = 1.2


def photo(orientation: int = 1, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """A photo-like JPEG (gradients and noise, so it compresses as photos do) with EXIF and GPS."""
    from PIL import Image

    base = Image.linear_gradient("L").resize((width, height))
    # Grain at a quarter of the size, scaled up: detail as a photo has, not white noise.
    noise = Image.effect_noise((width // 4, height // 4), 24).resize((width, height))
    image = Image.merge("RGB", (base, noise, base.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)}
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85, exif=exif.tobytes())
    return out.getvalue()


def pillow_decode_save(data: bytes) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def vips_process(data: bytes) -> tuple[bytes, bytes]:
    """What the MediaFunction does, with libvips: the upright original without metadata (decoded
    and encoded again: libvips has no block-level strip) and a 640 px preview (shrink-on-load)."""
    import pyvips

    # Random access: a rotation reads the rows out of order.
    image = pyvips.Image.new_from_buffer(data, "").autorot()
    original = image.jpegsave_buffer(Q=90, keep=0)  # keep=0: no metadata at all
    preview = pyvips.Image.thumbnail_buffer(data, 640).webpsave_buffer(Q=80, keep=0)
    return original, preview


def vips_decode_save(data: bytes) -> bytes:
    import pyvips

    image = pyvips.Image.new_from_buffer(data, "", access="sequential")
    return bytes(image.jpegsave_buffer(Q=90))


_PEAK = """
import sys
sys.path[:0] = {paths!r}
from bench.media import pillow_decode_save, vips_process, vips_decode_save
import PIL.Image, PIL.JpegImagePlugin, PIL.WebPImagePlugin, pyvips
from warble import imaging
data = open({path!r}, "rb").read()
def mb(field):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field)) // 1024
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
before = mb("VmRSS:")
{call}
print(mb("VmHWM:") - before)
"""

CASES = {
    "warble.imaging.process (Pillow)": "imaging.process(data, 'image/jpeg')",
    "Pillow decode + save": "pillow_decode_save(data)",
    "libvips process": "vips_process(data)",
    "libvips decode + save": "vips_decode_save(data)",
}


def peak_mb(call: str, path: str) -> int:
    """The MB a call on the file at ``path`` adds to a fresh process's peak resident set."""
    from bench.stack import ROOT

    code = _PEAK.format(paths=[str(ROOT), str(ROOT / "layers" / "shared")], path=path, call=call)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return int(done.stdout.strip().splitlines()[-1])


def _saved(run: Run, data: bytes, orientation: int) -> str:
    """The photo in a file for the memory probes (removed with the run)."""
    import os
    import tempfile

    with tempfile.NamedTemporaryFile(
        prefix=f"photo{orientation}-", suffix=".jpg", delete=False
    ) as f:
        f.write(data)
    run.cleanups.append(lambda: os.unlink(f.name))
    return f.name


def _ready_media(owner: int, n: int) -> list[str]:
    """``n`` ready media of ``owner``, written as MediaFunction leaves them."""
    from dataclasses import replace

    from warble import clock, services
    from warble.dal.media import MediaTable
    from warble.domain.media.ports import READY, StoredMedia

    table = MediaTable()
    made = []
    for _ in range(n):
        media_id = services.ids().next_id()
        pending = StoredMedia(
            id=media_id, owner_id=owner, content_type="image/jpeg", size=2_000_000,
            alt_text="a photo of the river at dawn", created_at_ms=clock.epoch_ms(), token="t",
        )  # fmt: skip
        table.create(pending)
        table.finish(
            replace(
                pending, status=READY, width=4000, height=3000,
                original_key=f"media/{media_id}/t.jpg",
                preview_key=f"media/{media_id}/t.preview.webp",
                blurhash="LKO2?U%2Tw=w]~RBVZRi};RPxuwH",
            )
        )  # fmt: skip
        made.append(str(media_id))
    return made


@group("media", "processing a 12-megapixel JPEG (Pillow, libvips beside it); home page with images")
def media_group(run: Run) -> Iterator[Item]:
    from warble import imaging, services

    # ---- processing ---------------------------------------------------------------------------
    try:
        import pyvips  # noqa: F401

        has_vips = True
    except (ImportError, OSError):
        has_vips = False
    for orientation, label in ((1, "upright"), (6, "to rotate (EXIF orientation 6)")):
        data = photo(orientation)
        breakdown: list[tuple[str, Any]] = []
        if has_vips:
            same = "libvips: the same work (decode, rotate, encode; 640 px preview)"
            breakdown = [
                (same, lambda d=data: vips_process(d)),
                ("libvips decode + save of the same file", lambda d=data: vips_decode_save(d)),
            ]
        path = run.resource(f"photo-{orientation}", lambda d=data, o=orientation: _saved(run, d, o))
        peaks = {name: peak_mb(call, path) for name, call in CASES.items()} if has_vips else {}
        yield Benchmark(
            f"process a {WIDTH}x{HEIGHT} JPEG, {label} ({len(data) // 1024} KB)",
            lambda d=data: imaging.process(d, "image/jpeg"),
            lambda d=data: pillow_decode_save(d),
            path="warble.imaging.process (Pillow)",
            baseline="Pillow decode + save of the same file",
            breakdown=breakdown,
            budget_s=20.0,
            warmup=2,
            min_iterations=5,
            max_iterations=40,
            throughput=False,
            notes=[
                "peak memory added to a fresh process: "
                + ", ".join(f"{name} {mb} MB" for name, mb in peaks.items())
            ]
            if peaks
            else ["pyvips is not installed: no libvips figures"],
        )

    # ---- the home page, 20 tweets with 4 images each, against one without images ----------------
    stack.shared(run)
    accounts, tweets, timelines = services.accounts(), services.tweets(), services.timelines()
    readers = {}
    for kind, with_media in (("plain", False), ("pics", True)):
        reader_id = make_user(f"md_{kind}_reader")
        author = make_user(f"md_{kind}_author")
        services.graph().follow(reader_id, author)
        for n in range(PAGE):
            media = _ready_media(author, 4) if with_media else []
            tweets.post(author, f"{kind} tweet {n}", None, media)
        timelines.rebuild(reader_id)
        timelines.home(reader_id, PAGE, None)  # warms the authors' profiles
        issued = accounts.login(f"md_{kind}_reader", PASSWORD, "bench")
        readers[kind] = expect(stack.load_function("tweets").handler, home_event(issued), 200)
        readers[kind]()
    with_images, without = readers["pics"], readers["plain"]
    page = json.loads(with_images()["body"])
    assert sum(len(t["media"]) for t in page["items"]) == PAGE * 4, "the page lost its images"

    def same_round_trips() -> list[str]:
        got, plain = stack.traced(with_images), stack.traced(without)
        if [c.split("(")[0] for c in got.calls] == [c.split("(")[0] for c in plain.calls]:
            return []
        return [f"round trips differ: with images [{got}], without [{plain}]"]

    yield Benchmark(
        f"GET /v1/timeline/home?limit={PAGE}, warm: {PAGE} tweets with 4 images each",
        with_images,
        without,
        path="handler, 20 x 4 images",
        baseline="handler, the same page without images",
        budget_s=8.0,
        warmup=50,
        min_iterations=100,
        max_iterations=2000,
        check=same_round_trips,
        describe=lambda: [f"round trips of one warm call with images: {stack.traced(with_images)}"],
        summarize=[
            lambda result: [
                f"goal: within {GOAL}x of the page without images; "
                + (
                    "met"
                    if result.baselines[0].ratio and result.baselines[0].ratio <= GOAL
                    else "NOT met"
                )
            ]
        ],
        notes=["each tweet keeps what it shows of its media: the page reads no media item"],
    )
