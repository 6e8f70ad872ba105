"""Every module of the built layers loads from bytecode on Lambda, none compiles at a cold start.

``python3.13 scripts/check_layer_bytecode.py [BUILD_DIR]`` (default ``.aws-sam/build``), run by
``scripts/validate-template.sh --build`` after ``sam build``. For each ``.py`` under the layers'
``python/`` directories it reads the pyc the layer's Makefile wrote and checks what CPython 3.13
checks before using one: the magic number of this interpreter, a hash-based pyc that is not
compared with its source at import (unchecked: file times do not survive the zip), and, since an
unchecked pyc is never compared at import, here that it was compiled from this very source.
Exits 1 naming what is missing or stale.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

LAYERS = ("SharedLayer", "DependenciesLayer")
UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, do not check the source


def problem(source: Path) -> str | None:
    """Why this module would compile at import, or None when its pyc will be used."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return "no pyc"
    header = cached.read_bytes()[:16]
    if header[:4] != importlib.util.MAGIC_NUMBER:
        return "pyc of another Python"
    if int.from_bytes(header[4:8], "little") != UNCHECKED_HASH:
        return "pyc checked against its source (timestamp or checked hash)"
    if header[8:16] != importlib.util.source_hash(source.read_bytes()):
        return "pyc of another source"
    return None


def main(build: Path) -> int:
    if sys.version_info[:2] != (3, 13):
        print("run this with Python 3.13, the functions' runtime", file=sys.stderr)
        return 2
    failures, checked = [], 0
    for layer in LAYERS:
        root = build / layer / "python"
        if not root.is_dir():
            failures.append(f"{root}: missing (run sam build first)")
            continue
        for source in sorted(root.rglob("*.py")):
            checked += 1
            why = problem(source)
            if why:
                failures.append(f"{source.relative_to(build)}: {why}")
    for line in failures[:50]:
        print(line, file=sys.stderr)
    if failures:
        print(
            f"{len(failures)} of {checked} modules would compile at a cold start", file=sys.stderr
        )
        return 1
    print(f"layer bytecode: {checked} modules, each with its unchecked-hash Python 3.13 pyc")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".aws-sam/build")))
