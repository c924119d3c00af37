"""The PCN controlled runs: each control changes one knob and nothing else, and
the command refuses bad input with a clear message."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from qoslab.reproduce.cells import Measured
from qoslab.reproduce.framework import Context
from qoslab.reproduce.paper import load_paper, paper_dir
from qoslab.reproduce.pcn import controls, plt, term_controls


def _doc(sc: object) -> dict:
    """The scenario's TOML, its traffic as validated (the paper models, ``model = "voice"``, expanded)."""
    doc = tomllib.loads(sc.to_toml())  # type: ignore[attr-defined]
    doc["traffic"] = sc.echo["traffic"]  # type: ignore[attr-defined]
    return doc


def _diff(a: object, b: object, path: str = "") -> list[str]:
    """The paths where two TOML documents differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _diff(a.get(k), b.get(k), f"{path}.{k}" if path else k)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        ("t37-t3", {"rate"}),
        ("t37-delay-10ms", {"delay"}),
    ],
)
def test_a_table_3_7_control_changes_only_its_knob(name, changed):
    before = _doc(controls._plt5_scenario(0.5, 0.05, controls.AS_SET_UP))
    after = _doc(controls._plt5_scenario(0.5, 0.05, controls.CONTROLS[name]))
    diff = _diff(before, after)
    assert diff, "the control changed nothing"
    assert {d.rsplit(".", 1)[-1] for d in diff} == changed, diff
    if name == "t37-t3":
        # Only the five bottlenecks (c_i -> c_i+1) change rate; the traffic is the set-up's (5x of OC3's
        # admissible rate would be wrong on T3: the call rate follows the link).
        links = after["topology"]["links"]
        assert sum(1 for lk in links if lk["rate"] == "T3") == controls.T37_BOTTLENECKS


def test_the_t3_control_offers_5x_of_the_t3_admissible_rate():
    sc = _doc(controls._plt5_scenario(0.5, 0.05, controls.CONTROLS["t37-t3"]))
    rate = sc["traffic"][0]["arrivals"]["rate"]
    base = _doc(controls._plt5_scenario(0.5, 0.05, controls.AS_SET_UP))["traffic"][0]["arrivals"]["rate"]
    assert float(str(rate).removesuffix("/s")) == pytest.approx(
        float(str(base).removesuffix("/s")) * plt.RATES["T3"] / plt.RATES["OC3"]
    )


def test_a_termination_control_changes_only_its_pcn_key(tmp_path: Path):
    ctx = Context(name="pcn", quick=False, seeds=[1], folder=tmp_path, log=lambda s: None, executor=None)
    from qoslab.reproduce.pcn import termination as term

    base = _doc(term.scenario(ctx, model="VBR", ingresses=10, flows=60))
    for name in ("low-agg-nearest", "low-agg-down", "low-agg-largest"):
        c = controls.CONTROLS[name]
        after = _doc(term.scenario(ctx, model="VBR", ingresses=10, flows=60, pcn=dict(c.pcn)))
        assert _diff(base, after) == [f"pcn.{k}" for k in c.pcn], name


def test_the_command_refuses_an_unknown_control_and_mixed_families(capsys):
    assert controls.main(["no-such"]) == 2
    assert "control: 'no-such'; allowed: t37-warmup-40s" in capsys.readouterr().err
    assert controls.main(["--weights", "0.2", "t37-t3"]) == 2
    assert "--weights: '0.2'; allowed: some of 0.1, 0.3, 0.5, 0.7, 0.9" in capsys.readouterr().err
    assert controls.main(["--seeds", "0", "t37-t3"]) == 2
    assert "--seeds: 0" in capsys.readouterr().err


def test_controls_of_two_families_are_refused_before_any_run(tmp_path: Path):
    ctx = Context(
        name="pcn",
        quick=False,
        seeds=[1],
        folder=tmp_path,
        log=lambda s: None,
        executor=None,
        paper=load_paper(paper_dir("pcn")),
    )
    from qoslab.errors import ReproductionError

    with pytest.raises(ReproductionError, match="mix families low-agg, t37"):
        controls.run_controls(ctx, [controls.CONTROLS["t37-t3"], controls.CONTROLS["low-agg-down"]], [0.5])


def test_the_claim_4_and_5_controls_judge_their_cells_two_sided(tmp_path: Path):
    """Issue 31, item 6: the controls' columns are the paper's cells, judged by the one rule in both
    directions (not "≤ 2" / "≥ 9"): a value far above the paper's differs as one far below does."""
    ctx = Context(
        name="pcn",
        quick=False,
        seeds=[1, 2, 3],
        folder=tmp_path,
        log=lambda s: None,
        executor=None,
        paper=load_paper(paper_dir("pcn")),
    )
    # Table 4.3: 9.59 and -0.51; Table 4.2 CBR / 600: 1.069, 12.17, 13.41, 13.97.
    at_paper = [[9.59] * 3, [-0.51] * 3, [1.069] * 3, [12.17] * 3, [13.41] * 3, [13.97] * 3]
    verdict, paper = term_controls.verdicts(ctx, at_paper)
    assert verdict == ["agrees"] * 6
    assert paper[0] == "9.59 ± 0.959" and paper[3] == "12.17 ± 1.217"
    high = [[v[0] * 1.6] * 3 for v in at_paper[:2]] + [[2.64] * 3, [20.6] * 3, [21.2] * 3, [22.2] * 3]
    assert term_controls.verdicts(ctx, high)[0][2:] == ["differs"] * 4
    low = [[9.59] * 3, [-0.51] * 3, [0.0] * 3, [6.3] * 3, [6.3] * 3, [6.7] * 3]
    assert term_controls.verdicts(ctx, low)[0][2:] == ["differs"] * 4


def test_measured_cells_of_the_controls_exist_in_the_paper_data():
    paper = load_paper(paper_dir("pcn"))
    keys = set(paper.keys())
    for t, r, c in term_controls.CELL_KEYS:
        assert (t, r, c) in keys
    for b in range(controls.T37_BOTTLENECKS):
        assert Measured("Table 3.7", "CBR", f"Bottleneck LinkId / {b + 1}", [0.0]).key in keys
    for m, k in controls.LOW_AGG:
        for f in controls.LOW_AGG_F:
            col = f"Deviation Interval / {'No-Rand' if f == 0 else f'{f:g}'}"
            assert ("Table 4.2", f"{m} / {k}", col) in keys


def test_the_single_link_control_offers_each_bottleneck_the_parking_lots_load():
    """t37-single-link changes the topology only: its one link gets the calls that each PLT5
    bottleneck gets from its two aggregates (5x the admissible rate), with the same CLE setting."""
    single = _doc(controls._plt5_scenario(0.3, 0.15, controls.CONTROLS["t37-single-link"]))
    lot = _doc(controls._plt5_scenario(0.3, 0.15, controls.AS_SET_UP))
    per_aggregate = lot["traffic"][0]["arrivals"]["rate"]
    assert single["traffic"][0]["arrivals"]["rate"] == pytest.approx(2 * per_aggregate)
    for k in ("cle", "cle_weight", "cle_threshold"):
        assert single["pcn"][k] == lot["pcn"][k]
    # The default interval (100 ms) in the parking lot, written out on the single link.
    assert single["pcn"]["cle_interval"] == lot["pcn"].get("cle_interval", "100ms")
    assert single["duration"] == lot["duration"]


def test_the_plt1_control_puts_two_aggregates_on_one_bottleneck_at_5x():
    one = _doc(controls._plt5_scenario(0.3, 0.15, controls.CONTROLS["t37-plt1"]))
    lot = _doc(controls._plt5_scenario(0.3, 0.15, controls.AS_SET_UP))
    assert [t["name"] for t in one["traffic"]] == ["long", "short0"]
    assert [t["arrivals"] for t in one["traffic"]] == [t["arrivals"] for t in lot["traffic"][:2]]
    assert sum(1 for lk in one["topology"]["links"] if lk.get("stages")) == 1
    assert one["pcn"] == {**lot["pcn"], "edges": one["pcn"]["edges"]}
