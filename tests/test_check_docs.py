"""The docs check of `make lint` (tests/check_docs.py): it finds what it must, and the repository is clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import check_docs

REPO = Path(__file__).resolve().parent.parent
# In pieces, so that a grep for seed file names finds none here either.
D, SEED, F3, F4 = "docs/", "seed", "003_" + "851ac3ee0c1b5dac", "004_" + "103cfaf3a9820062"


def _git_repo(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
    return tmp


def test_slug_is_githubs() -> None:
    assert check_docs.slug("`edge`: the [Guerin99] scenario") == "edge-the-guerin99-scenario"
    assert check_docs.slug("Whole process against ns-2.35 (issue 11 §3)") == "whole-process-against-ns-235-issue-11-3"


def test_finds_dead_links_anchors_and_seed_citations(tmp_path: Path) -> None:
    repo = _git_repo(
        tmp_path,
        {
            "docs/a.md": "# Title\n\n## Part one\n\n[ok](b.md#b-part) [ok](#part-one) [web](https://x.org/#y)\n"
            "[gone](c.md) [bad anchor](b.md#nope) [self](#nope)\n\nAs " + SEED + " 003 §III says.\n",
            "docs/b.md": "# B part\n\n```\n# not a heading\n```\n",
            "docs/reproductions/data/x/README.md": f"Source: {F3}.txt\n",
            "src/lib.rs": f"//! See {D}a.md#part-one and {D}a.md#gone and {D}missing.md.\n//! Source: `{F4}.txt`.\n",
        },
    )
    found = check_docs.check(repo)
    text = "\n".join(found)
    assert "docs/a.md:6: dead link c.md: no file docs/c.md" in text
    assert "docs/a.md:6: dead link b.md#nope: no heading #nope in docs/b.md" in text
    assert "docs/a.md:6: dead link #nope: no such heading in this file" in text
    assert f"docs/a.md:8: paper cited as '{SEED} 003'" in text
    assert f"src/lib.rs:1: dead link {D}a.md#gone" in text
    assert f"src/lib.rs:1: dead link {D}missing.md" in text
    assert f"src/lib.rs:2: paper cited as '{F4}'" in text
    assert len(found) == 7, found  # the data folder keeps its file name; the good links pass


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the git checkout")
def test_repository_is_clean() -> None:
    assert check_docs.check(REPO) == []
