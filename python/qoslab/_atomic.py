"""Writing a whole folder atomically, and only where qoslab may: build it
beside its target under a hidden temporary name, then swap it in, so
readers see the old folder or the complete new one, never a half-written
one.

**qoslab never deletes or moves a path it did not create.** A single
file (``qoslab report --out``, ``qoslab plot --out``) is written the same
way (:func:`write_file`) and replaces only a file that carries qoslab's
mark in its first bytes (the report's ``generator`` meta tag, a figure's
``Software`` / ``Creator`` metadata). A folder
qoslab writes carries a marker file, :data:`MARKER` (results written before
the marker existed are recognized by a ``summary.json`` or
``results.json`` naming a ``qoslab_version``). An existing target is
replaced only when it is such a folder; anything else (a user's folder, a
file, a device, a symbolic link) is refused with a :class:`ConfigError`
naming the option, before anything runs or is written.

**Kinds never mix** (:func:`check_kind`): a run result, a sweep folder and a
reproduction are told apart by their marker (or, for older folders, by the
files they hold: :func:`kind_of`); a result never replaces a result of
another kind, whatever the overwrite flag says, and is never written inside
another result folder. The message says to choose another folder or to
delete the old one by hand.

A writer holds a :class:`Destination` from its check to its final rename:

- **a lock**: ``fcntl.flock`` on ``.<name>.lock`` beside the target. A
  second writer of the same target is refused at once (``qoslab run``,
  ``reproduce``, ``Result.save``: exit 2 naming the PID that holds it) or
  waits (the sweep store, whose runs are content-addressed);
- **no silent overwrite**: a target holding a result of another seed or
  scenario (another reproduction, quick/full mode or seed list) is refused
  unless ``overwrite`` is given; the same seed and scenario is a rerun and
  replaces it;
- **its temporary sibling made up front** (``.<name>.tmp-<pid>-<tag>``, with
  ``.qoslab-writer`` inside naming the writer's PID and host), so an
  unusable destination (a file as parent, ``/proc``, a read-only folder, a
  name too long) is an error before the run;
- **cleaning after dead writers**: temporary and set-aside folders of this
  target left by a writer whose PID no longer runs on this host are removed
  (a set-aside previous result is put back when the target is missing).
  Folders of a live PID are left alone.

Names longer than the file system allows for the hidden siblings (255
bytes) are shortened with a hash, so a 250-character scenario name works.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from .errors import config_error

#: The file that marks a folder as written by qoslab (JSON: the version and what wrote it).
MARKER = ".qoslab"
#: Inside a temporary folder: the PID and host of the process writing it.
WRITER = ".qoslab-writer"
#: The longest file name (bytes) on the file systems qoslab writes to.
NAME_MAX = 255
#: How much of an existing file is read to recognize it as qoslab's.
_SNIFF = 8192
#: Room a hidden sibling's name needs beyond the target's name: ``.`` + ``.tmp-`` + PID + ``-`` + tag.
_SIBLING_ROOM = 1 + 5 + 10 + 1 + 12


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


# -- folder kinds: what qoslab writes is recognised, and never mixed ----------

#: The kinds of result folder qoslab writes, in words.
KINDS: dict[str, str] = {
    "run": "a run result (qoslab run, Result.save, qoslab testbed run)",
    "sweep": "a sweep folder (qoslab sweep, qoslab.sweep)",
    "reproduction": "a reproduction (qoslab reproduce)",
}


def _marker_kind(folder: Path) -> str | None:
    try:
        with open(folder / MARKER, encoding="utf-8") as f:
            doc = json.loads(f.read(_SNIFF))
    except (OSError, ValueError):
        return None
    ident = doc.get("identity") if isinstance(doc, dict) else None
    kind = ident.get("kind") if isinstance(ident, dict) else None
    return kind if kind in KINDS else None


def kind_of(folder: Path) -> str | None:
    """The kind of result folder ``folder`` is (a key of :data:`KINDS`), from its marker or,
    for folders written before markers named it, from the files it holds: ``summary.json``
    (a run), ``results.json`` (a reproduction), ``sweep.json`` or a ``runs/`` store (a
    sweep). ``None``: not a folder, or none of these."""
    if not folder.is_dir() or folder.is_symlink():
        return None
    kind = _marker_kind(folder)
    if kind is not None:
        return kind
    if not _written_by_qoslab(folder):
        return None
    if (folder / "sweep.json").is_file() or ((folder / "runs").is_dir() and (folder / "runs.log").is_file()):
        return "sweep"
    if (folder / "results.json").is_file():
        return "reproduction"
    if (folder / "summary.json").is_file():
        return "run"
    return None


def enclosing_result(target: Path) -> tuple[Path, str] | None:
    """The result folder (and its kind) that ``target`` would sit inside, if any: writing
    there would mix two results in one folder."""
    for up in Path(os.path.abspath(target)).parents:
        kind = kind_of(up)
        if kind is not None:
            return up, kind
    return None


def check_kind(target: Path, kind: str, *, option: str = "--out", shown: Path | None = None) -> None:
    """Refuses (``ConfigError``) to write a result of ``kind`` at ``target`` when ``target``
    holds a result of another kind, or sits inside a result folder: whatever the overwrite
    flag, a run never replaces a sweep or a reproduction (nor the reverse), and no result is
    written into another. The message names the way out: another folder, or deleting the old
    one by hand."""
    name = str(shown if shown is not None else target)
    old = kind_of(target)
    if old is not None and old != kind:
        raise config_error(
            option,
            f"{name!r} is {KINDS[old]}; this is {KINDS[kind]}, and qoslab never replaces one kind of result by "
            f"another (whatever --overwrite or overwrite=True say): choose another {option}, or delete "
            f"{name!r} yourself (rm -r) if you no longer need it",
        )
    inside = enclosing_result(target)
    if inside is not None:
        up, up_kind = inside
        raise config_error(
            option,
            f"{name!r} is inside {str(up)!r}, which is {KINDS[up_kind]}; qoslab never writes one result into "
            f"another: choose a folder outside it",
        )


def check_replaceable(target: Path, *, option: str = "--out", shown: Path | None = None) -> None:
    """Refuses (``ConfigError``) a ``target`` that exists and that qoslab did not write
    (``shown``: the path as the user gave it, for the message)."""
    name = str(shown if shown is not None else target)
    if target.is_symlink():
        raise config_error(option, f"{name!r} is a symbolic link; allowed: a folder qoslab writes (not a link)")
    if not target.exists():
        return
    if not target.is_dir():
        raise config_error(
            option,
            f"{name!r} exists and is not a folder; qoslab never replaces a path it did not create: "
            f"choose another {option}",
        )
    if not _written_by_qoslab(target):
        raise config_error(
            option,
            f"{name!r} exists and was not written by qoslab (no {MARKER} marker); qoslab never deletes "
            "a folder it did not create: choose a new folder, or remove this one yourself",
        )


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    for d in (folder, *folder.parents):
        if d.exists() or d.is_symlink():
            break
        missing.append(d)
    return missing


def _check_ancestors(target: Path, shown: Path, option: str) -> None:
    """Refuses a target below a path that exists and is not a folder (``afile/x``)."""
    for up in target.parents:
        if up.exists():
            if not up.is_dir():
                raise config_error(
                    option,
                    f"{str(shown)!r} cannot be written: {str(up)!r} is a file, not a folder; choose another {option}",
                )
            return


# -- identities: what a result folder holds --------------------------------


def scenario_digest(echo: Mapping[str, Any]) -> str:
    """SHA-256 of a scenario echo without its ``seed``, as canonical JSON: two runs of the
    same validated scenario (overrides applied, defaults filled in) have the same digest."""
    doc = {k: v for k, v in echo.items() if k != "seed"}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_identity(echo: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """What a run's result folder holds: its scenario (name and digest) and seed."""
    return {"kind": "run", "name": str(echo.get("name", "")), "scenario": scenario_digest(echo), "seed": int(seed)}


def reproduction_identity(name: str, quick: bool, seeds: list[int]) -> dict[str, Any]:
    """What a reproduction folder holds: its name, mode and seeds."""
    return {"kind": "reproduction", "name": name, "quick": bool(quick), "seeds": [int(s) for s in seeds]}


def identity_of(folder: Path) -> dict[str, Any] | None:
    """The identity of an existing result folder (from its ``summary.json`` or
    ``results.json``), or ``None`` when it holds neither."""
    try:
        with open(folder / "summary.json", encoding="utf-8") as f:
            s = json.load(f)
        if isinstance(s, dict) and isinstance(s.get("scenario"), dict) and s.get("seed") is not None:
            return run_identity(s["scenario"], int(s["seed"]))
    except (OSError, ValueError, TypeError):
        pass
    try:
        with open(folder / "results.json", encoding="utf-8") as f:
            r = json.load(f)
        if isinstance(r, dict) and "name" in r:
            return reproduction_identity(str(r["name"]), bool(r.get("quick")), list(r.get("seeds") or []))
    except (OSError, ValueError, TypeError):
        pass
    return None


def _describe(ident: Mapping[str, Any] | None) -> str:
    if ident is None:
        return "something that is not a run or reproduction result"
    if ident["kind"] == "run":
        return f"seed {ident['seed']} of scenario {ident['name']!r} (digest {ident['scenario'][:12]})"
    mode = "quick" if ident["quick"] else "full"
    return f"the {mode} reproduction {ident['name']!r} with seeds {ident['seeds']}"


def check_identity(
    target: Path,
    identity: Mapping[str, Any],
    *,
    overwrite: bool,
    option: str,
    overwrite_hint: str,
    shown: Path | None = None,
) -> None:
    """Refuses to replace ``target`` when it holds a result of another identity (see the module doc)."""
    if overwrite or not target.is_dir():
        return
    old = identity_of(target)
    if old == dict(identity):
        return
    name = str(shown if shown is not None else target)
    raise config_error(
        option,
        f"{name!r} holds {_describe(old)}; this is {_describe(identity)}. qoslab does not replace "
        f"a result of another seed or scenario: add {overwrite_hint} to replace it, or choose another {option}",
    )


# -- names of the hidden siblings ---------------------------------------------


def _stem(name: str) -> str:
    """``name``, shortened (with a hash) so that every hidden sibling's name fits :data:`NAME_MAX`."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) + _SIBLING_ROOM <= NAME_MAX:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:8]
    keep = raw[: NAME_MAX - _SIBLING_ROOM - 9].decode("utf-8", "ignore")
    return f"{keep}~{digest}"


def lock_path(target: Path) -> Path:
    return target.parent / f".{_stem(target.name)}.lock"


def _sibling_re(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(_stem(target.name))}\.(tmp|old)-(\d+)-[0-9a-f]{{12}}")


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


def _writer_of(folder: Path, pid_in_name: int) -> tuple[int, str]:
    """The PID and host recorded in a temporary folder (``WRITER``), else the PID of its name."""
    try:
        doc = json.loads((folder / WRITER).read_text(encoding="utf-8"))
        return int(doc["pid"]), str(doc.get("host", socket.gethostname()))
    except (OSError, ValueError, KeyError, TypeError):
        return pid_in_name, socket.gethostname()


def clean_dead_writers(target: Path) -> list[Path]:
    """Removes the temporary folders of ``target`` left by writers that no longer run (see
    the module doc); a set-aside previous result (``.old-``) is put back if the target is
    missing. Returns what it removed or restored. Call it with the target's lock held."""
    pattern = _sibling_re(target)
    done: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return done
    host = socket.gethostname()
    for p in sorted(entries):
        m = pattern.fullmatch(p.name)
        if m is None or p.is_symlink() or not p.is_dir():
            continue
        kind, pid_text = m.group(1), m.group(2)
        pid, where = _writer_of(p, int(pid_text)) if kind == "tmp" else (int(pid_text), host)
        if where != host or _alive(pid):
            continue
        if kind == "old" and not target.exists() and not target.is_symlink():
            os.replace(p, target)  # the writer died between its two renames: the old result comes back
        else:
            shutil.rmtree(p, ignore_errors=True)
        done.append(p)
    return done


# -- the lock ----------------------------------------------------------------


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "?"
    return text or "?"


def _acquire(path: Path, *, wait: bool, target: Path, option: str) -> int:
    """An exclusive ``flock`` on ``path`` (created if needed); the descriptor to release."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise config_error(
                option,
                f"{str(target)!r} is being written by another qoslab (PID {_holder(path)}); qoslab refuses two "
                f"writers of one folder: wait for it to finish, or choose another {option}",
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder before us may have removed the file on release: lock the file that is there.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd


def _release(path: Path, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
    os.close(fd)


# -- the destination ---------------------------------------------------------


def _absolute(target: Path, option: str) -> Path:
    t = Path(os.path.abspath(target))
    if not t.name or t == Path(t.anchor):
        raise config_error(option, f"{str(target)!r} is the root folder; allowed: a folder below it")
    cwd = Path(os.path.abspath(Path.cwd()))
    if t == cwd or t in cwd.parents:
        raise config_error(
            option,
            f"{str(target)!r} is the working folder or holds it; qoslab never replaces it: choose a folder "
            "inside it, e.g. results/NAME",
        )
    return t


class Destination:
    """A result folder being written: locked, checked and given its temporary sibling on
    ``__enter__`` (a :class:`ConfigError` naming ``option`` if any of it fails, before
    anything runs); :meth:`commit` swaps the temporary folder in; leaving without a commit
    (an error, Ctrl-C, SIGTERM) removes it and keeps the target as it was.

    - ``identity``: what the new folder will hold (:func:`run_identity`,
      :func:`reproduction_identity`); an existing target of another identity is refused
      unless ``overwrite``. ``None``: no such check.
    - ``wait``: wait for another writer's lock instead of refusing.
    - ``overwrite_hint``: how the message names the way to overwrite (``--overwrite``).
    """

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        option: str = "--out",
        identity: Mapping[str, Any] | None = None,
        overwrite: bool = False,
        wait: bool = False,
        overwrite_hint: str = "--overwrite",
    ) -> None:
        self.given = Path(target)
        self.option = option
        self.identity = dict(identity) if identity is not None else None
        self.overwrite = overwrite
        self.wait = wait
        self.overwrite_hint = overwrite_hint
        self.target = self.given
        self._lock: tuple[Path, int] | None = None
        self._tmp: Path | None = None
        self._committed = False
        # Folders above the target that __enter__ created: removed again (if empty) when
        # nothing was committed, so a failed run leaves no trace.
        self._made: list[Path] = []

    @property
    def tmp(self) -> Path:
        """The temporary folder to write into."""
        if self._tmp is None:
            raise RuntimeError("Destination used outside its with-block")
        return self._tmp

    def __enter__(self) -> Destination:
        opt = self.option
        if not str(self.given).strip():
            raise config_error(opt, "is empty; allowed: a folder name, e.g. results/NAME")
        self.target = _absolute(self.given, opt)
        parent = self.target.parent
        shown = str(self.given)
        try:
            longest = int(os.pathconf(parent, "PC_NAME_MAX"))
        except (OSError, ValueError):
            longest = NAME_MAX
        size = len(self.target.name.encode("utf-8", "surrogateescape"))
        if size > longest:
            raise config_error(
                opt,
                f"{shown!r} cannot be written: its name is {size} bytes, longer than the {longest} this file "
                f"system allows; choose a shorter {opt} (or a shorter scenario name)",
            )
        try:
            check_replaceable(self.target, option=opt, shown=self.given)
            _check_ancestors(self.target, self.given, opt)
            if self.identity is not None:
                check_kind(self.target, str(self.identity["kind"]), option=opt, shown=self.given)
            self._made = _missing_folders(parent)
            parent.mkdir(parents=True, exist_ok=True)
            lock = lock_path(self.target)
            self._lock = (lock, _acquire(lock, wait=self.wait, target=self.given, option=opt))
        except OSError as e:
            raise config_error(opt, f"{shown!r} cannot be written: {e.strerror or e}") from None
        try:
            clean_dead_writers(self.target)
            check_replaceable(self.target, option=opt, shown=self.given)  # again, now that we hold the lock
            if self.identity is not None:
                check_kind(self.target, str(self.identity["kind"]), option=opt, shown=self.given)
                check_identity(
                    self.target,
                    self.identity,
                    overwrite=self.overwrite,
                    option=opt,
                    overwrite_hint=self.overwrite_hint,
                    shown=self.given,
                )
            tmp = parent / f".{_stem(self.target.name)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            try:
                tmp.mkdir()
                self._tmp = tmp
                record = {"pid": os.getpid(), "host": socket.gethostname()}
                (tmp / WRITER).write_text(json.dumps(record) + "\n", encoding="utf-8")
            except OSError as e:
                raise config_error(opt, f"{shown!r} cannot be written: {e.strerror or e}") from None
        except BaseException:
            self._cleanup()
            raise
        return self

    def commit(self) -> Path:
        """Marks the temporary folder and swaps it in for the target (an existing target is
        set aside, then removed once the new one is in place). SIGINT and SIGTERM wait until
        the swap is done, so a kill never leaves the target missing."""
        from . import __version__

        tmp = self.tmp
        marker: dict[str, Any] = {"qoslab_version": __version__}
        if self.identity is not None:
            marker["identity"] = self.identity
        (tmp / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
        (tmp / WRITER).unlink(missing_ok=True)
        target = self.target
        blocked = {signal.SIGINT, signal.SIGTERM}
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            if target.exists() or target.is_symlink():
                check_replaceable(target, option=self.option)
                old = target.parent / tmp.name.replace(".tmp-", ".old-", 1)
                os.replace(target, old)
                os.replace(tmp, target)
                self._committed = True
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
                self._committed = True
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return target

    def _cleanup(self) -> None:
        if self._tmp is not None and not self._committed:
            shutil.rmtree(self._tmp, ignore_errors=True)
        self._tmp = None
        if self._lock is not None:
            _release(*self._lock)
            self._lock = None
        if not self._committed:
            for d in self._made:  # deepest first; a folder something else wrote into stays
                with contextlib.suppress(OSError):
                    d.rmdir()
        self._made = []

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._cleanup()


def check_destination(target: Path, *, option: str = "--out") -> None:
    """Everything :class:`Destination` needs of ``target``, checked and let go again (for
    callers that cannot hold it)."""
    with Destination(target, option=option):
        pass


@contextmanager
def atomic_dir(
    target: Path,
    *,
    option: str = "--out",
    identity: Mapping[str, Any] | None = None,
    overwrite: bool = True,
    wait: bool = True,
    overwrite_hint: str = "--overwrite",
) -> Iterator[Path]:
    """Yields an empty temporary folder beside ``target``; on normal exit it marks it
    (:data:`MARKER`) and replaces ``target`` (an existing one, which must be qoslab's, is
    removed only after the swap); on an exception the temporary folder is removed and
    ``target`` is untouched. See :class:`Destination` for the arguments."""
    with Destination(
        target, option=option, identity=identity, overwrite=overwrite, wait=wait, overwrite_hint=overwrite_hint
    ) as d:
        yield d.tmp
        d.commit()


# -- single files: reports and figures ----------------------------------------


def check_file_replaceable(target: Path, signature: bytes, *, option: str = "--out") -> Path:
    """Refuses (``ConfigError``) a file ``target`` qoslab may not write: a symbolic
    link, a folder or device, an existing file whose first bytes do not hold
    ``signature`` (the mark qoslab writes into its reports and figures), or a
    path below a file. Returns the absolute target. Called before the work
    that produces the file, so a refused ``--out`` costs nothing."""
    path = _absolute(target, option)
    if path.is_symlink():
        raise config_error(option, f"{str(target)!r} is a symbolic link; allowed: a file qoslab writes (not a link)")
    if path.exists():
        if not path.is_file():
            raise config_error(
                option,
                f"{str(target)!r} exists and is not a regular file; qoslab never replaces it: choose another {option}",
            )
        try:
            with open(path, "rb") as f:
                head = f.read(_SNIFF)
        except OSError as e:
            what = f"{str(target)!r} cannot be read: {e.strerror}; choose another {option}"
            raise config_error(option, what) from None
        if signature not in head:
            raise config_error(
                option,
                f"{str(target)!r} exists and was not written by qoslab; qoslab never replaces a file it did not "
                f"create: choose a new file name, or remove this one yourself",
            )
    else:
        _check_ancestors(path, target, option)
    return path


def write_file(target: Path, data: bytes, signature: bytes, *, option: str = "--out") -> Path:
    """Writes ``data`` (which must hold ``signature``) to ``target`` atomically: a
    hidden sibling, synced, then renamed over it, under the rules of
    :func:`check_file_replaceable`. Returns the absolute path."""
    if signature not in data[:_SNIFF]:
        raise ValueError("the file qoslab writes must carry its signature in its first bytes")
    path = check_file_replaceable(target, signature, option=option)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise config_error(option, f"{str(target)!r}: cannot create its folder: {e.strerror}") from None
    tmp = path.parent / f".{_stem(path.name)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        try:
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            what = f"{str(target)!r} cannot be written: {e.strerror}; choose another {option}"
            raise config_error(option, what) from None
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return path
