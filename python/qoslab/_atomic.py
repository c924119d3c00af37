"""Writing a whole folder atomically, and only where qoslab may: build it
beside its target under a hidden temporary name, then swap it in, so
readers see the old folder or the complete new one, never a half-written
one.

**qoslab never deletes or moves a path it did not create.** A folder
qoslab writes carries a marker file, :data:`MARKER` (results written before
the marker existed are recognized by a ``summary.json`` or
``results.json`` naming a ``qoslab_version``). An existing target is
replaced only when it is such a folder; anything else (a user's folder, a
file, a device, a symbolic link) is refused with a :class:`ConfigError`
naming the option, before anything runs or is written
(:func:`check_destination`).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import config_error

#: The file that marks a folder as written by qoslab (JSON: the version and what wrote it).
MARKER = ".qoslab"


def _written_by_qoslab(folder: Path) -> bool:
    if (folder / MARKER).is_file():
        return True
    for name in ("summary.json", "results.json", "sweep.json"):
        try:
            with open(folder / name, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "qoslab_version" in doc:
            return True
    return False


def check_replaceable(target: Path, *, option: str = "--out") -> None:
    """Refuses (``ConfigError``) a ``target`` that exists and that qoslab did not write."""
    if target.is_symlink():
        raise config_error(option, f"{str(target)!r} is a symbolic link; allowed: a folder qoslab writes (not a link)")
    if not target.exists():
        return
    if not target.is_dir():
        raise config_error(
            option,
            f"{str(target)!r} exists and is not a folder; qoslab never replaces a path it did not create: "
            "choose another --out",
        )
    if not _written_by_qoslab(target):
        raise config_error(
            option,
            f"{str(target)!r} exists and was not written by qoslab (no {MARKER} marker); qoslab never deletes "
            "a folder it did not create: choose a new folder, or remove this one yourself",
        )


def check_destination(target: Path, *, option: str = "--out") -> None:
    """Everything :func:`atomic_dir` needs of ``target``, checked before a run:
    replaceable (see :func:`check_replaceable`), and its parent a folder
    where a temporary sibling can be made (then removed again)."""
    check_replaceable(target, option=option)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = parent / f".{target.name}.tmp-{uuid.uuid4().hex[:12]}"
        probe.mkdir()
        probe.rmdir()
    except OSError as e:
        raise config_error(option, f"{str(target)!r} cannot be written: {e.strerror or e}") from None


@contextmanager
def atomic_dir(target: Path, *, option: str = "--out") -> Iterator[Path]:
    """Yields an empty temporary folder beside ``target``; on normal exit it
    marks it (:data:`MARKER`) and replaces ``target`` (an existing one,
    which must be qoslab's, is removed only after the swap); on an exception
    the temporary folder is removed and ``target`` is untouched."""
    check_replaceable(target, option=option)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:12]
    tmp = parent / f".{target.name}.tmp-{tag}"
    tmp.mkdir()
    try:
        yield tmp
        from . import __version__

        (tmp / MARKER).write_text(json.dumps({"qoslab_version": __version__}) + "\n", encoding="utf-8")
        if target.exists() or target.is_symlink():
            check_replaceable(target, option=option)
            old = parent / f".{target.name}.old-{tag}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
