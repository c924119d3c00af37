"""Docs check, part of `make lint`: dead links and paper citations by seed file.

Fails (exit 1, one ``file:line: what`` per finding) on

- a relative link in a Markdown file (``[text](path#anchor)``) whose file
  does not exist or whose anchor is no heading of that file;
- a ``docs/….md`` or ``docs/….md#anchor`` path in code (Rust, Python, TOML,
  Tcl, the Makefile) that names no file or no heading;
- a paper cited as "seed 00N" or by its seed file name (``00N_<hash>.txt``):
  cite the key of docs/papers.md instead ("seed" is the random seed). The
  reproductions' paper data (docs/reproductions/data/) may keep the file
  name as its source.

Run: ``python tests/check_docs.py [repo]``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

CODE_EXTS = {".rs", ".py", ".pyi", ".toml", ".tcl"}
CITE_OK = ("docs/reproductions/data/",)
SKIP = {"tests/test_check_docs.py"}  # the check's own test: its fixtures are the mistakes it must find
SEED_CITE = re.compile(r"\b[Ss]eeds?[- ]00[0-9]\b|\b00[0-4]_[0-9a-f]{16}\b")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_DOC = re.compile(r"(?<![\w/.-])(docs/[\w./-]+\.md)(#[\w-]+)?")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors a Markdown file defines: its headings' slugs (repeats get -1, -2, …) and explicit ids."""
    seen: dict[str, int] = {}
    out = set()
    fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
        out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
    return frozenset(out)


def check_target(repo: Path, base: Path, target: str) -> str | None:
    """What is wrong with a relative link `target` from a file in `base`, or None."""
    path, _, anchor = target.partition("#")
    dest = (base / path).resolve() if path else None
    if dest is not None:
        try:
            dest.relative_to(repo)
        except ValueError:
            return f"link {target} leaves the repository"
        if not dest.exists():
            return f"dead link {target}: no file {dest.relative_to(repo)}"
    if anchor and (dest is None or dest.suffix == ".md"):
        md = dest if dest is not None else None
        if md is not None and md.is_file() and anchor not in anchors(md):
            return f"dead link {target}: no heading #{anchor} in {md.relative_to(repo)}"
    return None


def files(repo: Path) -> list[str]:
    cmd = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    out = subprocess.run(cmd, cwd=repo, capture_output=True, check=True).stdout.decode()
    return sorted(n for n in out.split("\0") if n and (repo / n).is_file())


def check(repo: Path) -> list[str]:
    problems = []
    for name in files(repo):
        p = repo / name
        if name in SKIP:
            continue
        is_md = p.suffix == ".md"
        is_code = p.suffix in CODE_EXTS or p.name == "Makefile"
        if not (is_md or is_code):
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        fence = False
        for n, line in enumerate(text.splitlines(), 1):
            if not name.startswith(CITE_OK):
                for m in SEED_CITE.finditer(line):
                    problems.append(
                        f"{name}:{n}: paper cited as {m.group(0)!r}: use its key from docs/papers.md "
                        "(e.g. [Claypool00 §3.2])"
                    )
            if is_md:
                if line.lstrip().startswith("```"):
                    fence = not fence
                if fence:
                    continue
                for m in MD_LINK.finditer(line):
                    t = m.group(1).strip("<>")
                    if re.match(r"[a-zA-Z][\w+.-]*:", t):
                        continue  # http:, mailto:, …
                    if t.startswith("#"):
                        if t[1:] not in anchors(p):
                            problems.append(f"{name}:{n}: dead link {t}: no such heading in this file")
                        continue
                    why = check_target(repo, p.parent, t)
                    if why:
                        problems.append(f"{name}:{n}: {why}")
            else:
                for m in CODE_DOC.finditer(line):
                    why = check_target(repo, repo, m.group(1) + (m.group(2) or ""))
                    if why:
                        problems.append(f"{name}:{n}: {why}")
    return problems


def main(argv: list[str]) -> int:
    repo = Path(argv[0] if argv else Path(__file__).resolve().parent.parent).resolve()
    problems = check(repo)
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
