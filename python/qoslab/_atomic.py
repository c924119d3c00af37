"""Writing a whole folder atomically: build it beside its target under a
hidden temporary name, then swap it in, so readers see the old folder or
the complete new one, never a half-written one."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_dir(target: Path) -> Iterator[Path]:
    """Yields an empty temporary folder beside ``target``; on normal exit it
    replaces ``target`` (an existing one is removed only after the swap); on
    an exception the temporary folder is removed and ``target`` is untouched."""
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:12]
    tmp = parent / f".{target.name}.tmp-{tag}"
    tmp.mkdir()
    try:
        yield tmp
        if target.exists() or target.is_symlink():
            old = parent / f".{target.name}.old-{tag}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
