"""The controlled runs behind Table 2 of the MACE paper (``qoslab.reproduce.mace.controls``, issue
30): each control changes one knob of Table 2's scenarios and nothing else, and bad input is a
clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qoslab.reproduce.framework import Context
from qoslab.reproduce.mace import controls
from qoslab.reproduce.mace.params import S3_MODELS_FULL
from qoslab.reproduce.mace.runs import table2_spec
from qoslab.reproduce.paper import load_paper, paper_dir

#: The scenario fields each control may change (the last parts of their dotted paths).
KNOB_FIELDS = {
    "stale-300s": {"stale_timeout"},
    "no-departures": {"lifetime", "lifetime_dist"},
    "v-1": {"v"},
    "window-continue": {"restart_window"},
    "nominal-packetization": {"packetization"},
}


def _leaves(x: Any, path: str = "") -> dict[str, Any]:
    if isinstance(x, dict):
        return {k: v for key, val in x.items() for k, v in _leaves(val, f"{path}.{key}" if path else key).items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in _leaves(val, f"{path}.{i}").items()}
    return {path: x}


def _ctx(tmp_path: Path) -> Context:
    return Context(
        name="mace", quick=False, seeds=[1], folder=tmp_path, log=lambda _: None, paper=load_paper(paper_dir("mace"))
    )


def test_every_control_is_listed_with_its_fields():
    assert set(controls.CONTROLS) == set(KNOB_FIELDS)


@pytest.mark.parametrize("name", sorted(KNOB_FIELDS))
def test_each_control_changes_its_one_knob_for_every_model(tmp_path, name):
    ctx, control = _ctx(tmp_path), controls.CONTROLS[name]
    for model in S3_MODELS_FULL:
        for kind in control.admissions:
            _, base, _ = table2_spec(ctx, model, controls.ADMISSIONS[kind], kind, 1)
            _, after, _ = table2_spec(ctx, model, control.admissions[kind], kind, 1, extra=control.extra(model))
            a, b = _leaves(base.validate()), _leaves(after.validate())
            changed = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
            assert changed, (name, model, kind)  # the knob moved
            assert {k.rsplit(".", 1)[-1] for k in changed} <= KNOB_FIELDS[name], (name, model, kind, changed)
            if name == "nominal-packetization":  # every ON/OFF group, and no CBR group
                names = [g["name"] for g in base.validate()["traffic"]]
                groups = {names[int(k.split(".")[1])] for k in changed}
                assert groups == set(controls._on_off(model)), (model, groups)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no-such-control"], "control: 'no-such-control'; allowed: stale-300s"),
        (["v-1", "--seeds", "0"], "--seeds: 0; allowed: an integer >= 1"),
        (["v-1", "--models", "poo1,poo9"], "--models: poo9; allowed: poo1, poo2"),
        ([], "control: None; allowed:"),
    ],
)
def test_bad_input_is_a_clear_error_before_any_run(capsys, argv, message):
    assert controls.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_list_names_every_control(capsys):
    assert controls.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert all(out.count(f"{name}:") == 1 for name in KNOB_FIELDS)
