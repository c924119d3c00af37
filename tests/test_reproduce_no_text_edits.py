"""Guard (issue 33): the reproductions build their variants with the builders or typed overrides,
never by editing TOML text, and take no parameter back out of a variant's or a group's name.

The scan reads the source of ``python/qoslab/reproduce/`` (no import, no run) and names each
finding as ``file:line``. What it looks for:

- ``Scenario.from_toml(text)`` where the text is not ``tomli_w.dumps(...)`` of a dict (text built
  by ``replace``, ``%``, ``format`` or read from a file);
- ``%`` or ``.format()`` applied to a TOML template (a string holding ``=`` and ``%`` or ``{}``,
  written in place or bound to a module-level name), and f-strings that write a TOML inline table
  (``{{ key = ... }}``);
- ``.replace()`` on text (a receiver named ``text``/``toml``) or with TOML in its arguments;
- ``split``/``rsplit``/``partition``/``rpartition`` with a separator holding ``_`` (the names'
  separator) or on a variant or group; pandas' ``.str.split``/``rsplit``/``extract``/
  ``removeprefix``/``removesuffix``/``slice`` on a column (parsing every row's name);
- an override key that picks a list's entry by its position (``traffic.2.flows``,
  ``topology.links.{i}.queue``): a selector names it (``traffic[bg]``,
  ``topology.links[r0->r1]``), so a reordered file cannot make it set another entry.

Splitting on ``,`` (command-line lists) or white space, and ``replace`` that formats a label or a
markdown cell, are not findings.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPRODUCE = Path(__file__).resolve().parents[1] / "python" / "qoslab" / "reproduce"

_SPLITS = {"split", "rsplit", "partition", "rpartition"}
_COLUMN_PARSES = {"split", "rsplit", "extract", "removeprefix", "removesuffix", "slice", "partition", "rpartition"}
_NAMES = ("variant", "group")
#: A list of the scenario format indexed by position in an override key ("{}" stands for an
#: f-string's replacement field).
_POSITIONAL = re.compile(r"(?:^|\.)(?:traffic|links|nodes|stages|rules|streams)\.(?:\d+|\{\})(?:[.=]|$)")


def _src(node: ast.AST) -> str:
    return ast.unparse(node)


def _str(node: ast.AST, consts: dict[str, str]) -> str | None:
    """The string ``node`` is: a literal, or a name bound to a module-level string literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return None


def _is_template(s: str) -> bool:
    return "=" in s and ("%" in s or "{}" in s or "{0" in s)


def string_constants(source: str) -> dict[str, str]:
    """The module-level names bound to a string literal in ``source``."""
    return {
        t.id: n.value.value
        for n in ast.parse(source).body
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }


def findings(source: str, file: str = "<string>", constants: dict[str, str] | None = None) -> list[str]:
    """Every TOML text edit and name parse in ``source``, as ``file:line: what``; ``constants``:
    string constants of other modules it may import (a template defined in one, filled in another)."""
    tree = ast.parse(source)
    consts = {**(constants or {}), **string_constants(source)}
    out: list[str] = []

    def hit(node: ast.AST, what: str) -> None:
        out.append(f"{file}:{getattr(node, 'lineno', 0)}: {what}: {_src(node)[:100]}")

    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
    }
    # An f-string's literal parts are judged with the f-string, not alone.
    docstrings |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            key = node.value
        elif isinstance(node, ast.JoinedStr):
            key = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        if key is not None and not any(c.isspace() for c in key) and _POSITIONAL.search(key):
            hit(node, "an override key that picks a list entry by position")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            s = _str(node.left, consts)
            if s is not None and _is_template(s) and "%" in s:
                hit(node, "a TOML template filled with %")
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if "{ " in text and " = " in text:
                hit(node, "an f-string writing a TOML inline table")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, recv = node.func.attr, node.func.value
            args = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            column = isinstance(recv, ast.Attribute) and recv.attr == "str"
            if attr == "from_toml":
                first = node.args[0] if node.args else None
                dumped = (
                    isinstance(first, ast.Call)
                    and isinstance(first.func, ast.Attribute)
                    and first.func.attr == "dumps"
                    and _src(first.func.value) == "tomli_w"
                )
                if not dumped:
                    hit(node, "Scenario.from_toml on text not dumped from a dict")
            elif attr == "format":
                s = _str(recv, consts)
                if s is not None and _is_template(s):
                    hit(node, "a TOML template filled with format()")
            elif attr == "replace" and not column:
                receiver = _src(recv).lower()
                if "text" in receiver or "toml" in receiver or any(" = " in a.value for a in args):
                    hit(node, "replace() on scenario text")
            elif column and attr in _COLUMN_PARSES:
                hit(node, f"a column's names parsed with .str.{attr}")
            elif attr in _SPLITS:
                receiver = _src(recv).lower()
                if any("_" in a.value for a in args) or any(n in receiver for n in _NAMES):
                    hit(node, f"a name parsed with {attr}()")
    return sorted(out, key=lambda s: int(s.split(":")[1]))


def scan(root: Path) -> list[str]:
    """The findings of every module under ``root``."""
    sources = {path: path.read_text(encoding="utf-8") for path in sorted(root.rglob("*.py"))}
    constants = {k: v for text in sources.values() for k, v in string_constants(text).items()}
    return [
        f for path, text in sources.items() for f in findings(text, str(path.relative_to(root.parents[1])), constants)
    ]


def test_no_reproduction_edits_toml_text_or_parses_names():
    found = scan(REPRODUCE)
    assert not found, "TOML text edits or names parsed under reproduce/:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "snippet",
    [
        "MBAC = '{ type = \"mbac\", v = %g }'\nx = MBAC % 0.95",
        'x = (MBAC % 0.95).replace("restart_window = true", "restart_window = false")',
        "x = f'{{ type = \"mbac\", v = {v:g} }}'",
        "text = path.read_text()\ntext = text.replace(old, new)",
        "sc = Scenario.from_toml(text, origin=str(path))",
        'T = "{{ v = {} }}"\nx = T.format(1)',
        'f = float(variant.rsplit("_f", 1)[1])',
        'c = MIX_BPS[str(g).split("_", 1)[1]]',
        'k = group.partition("-")[2]',
        'idx = f["src"].str.removeprefix("src").astype(int)',
        'c = flows["group"].str.split("_").str[1]',
        'over = ["traffic.2.flows=40"]',
        'over = [f"topology.links.{i}.queue.buffers={n}"]',
        'over = [(f"traffic.{g}.send_jitter", j)]',
        'K = "topology.links.3.mace"',
    ],
)
def test_the_guard_finds_each_kind_of_edit_and_parse(snippet):
    assert findings(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        'sc = Scenario.from_toml(tomli_w.dumps(doc), origin="x")',
        's = s.replace("|", "\\\\|").replace("\\n", " ")',
        "name = f\"ctl_{label.replace(' ', '_')}\"",
        'models = [m.strip() for m in a.models.split(",")]',
        "words = str(detail).split()",
        'over = [f"duration={p}", (f"{KEY}.admission", mbac_admission(v=0.95))]',
        "label = f\"{n.rsplit('.', 1)[-1]}\"",
        'over = [f"traffic[{g}].flows=40", (f"topology.links[r0->r1].queue.buffers", 80)]',
        'def f():\n    """Sets ``traffic.0.flows``."""',
    ],
)
def test_the_guard_lets_labels_lists_and_typed_overrides_pass(snippet):
    assert not findings(snippet), snippet
