"""qoslab.pcn.expected_termination: [Zhang07 §4.4.1] (the beat-down effect
under uniformly random termination marking)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import qoslab
from qoslab.pcn import expected_termination


def test_plt2_example_of_section_4_4_1_is_reproduced_exactly():
    # [Zhang07 §4.4.1]: long IEA 1/2 of the link, short IEAs 1/4, termination rate 1/2.
    r = expected_termination(2, 0.5, 0.25, 0.5)
    assert r["long"] == 3 / 7
    assert r["short"] == [1 / 3, 1 / 7]
    assert r["bottlenecks"] == [25 / 63, 1 / 3]


def test_plt2_example_with_fractions_and_scaled_units_gives_the_same_floats():
    r = expected_termination(2, Fraction(1, 2), [Fraction(1, 4), Fraction(1, 4)], Fraction(1, 2))
    assert r == {"long": 3 / 7, "short": [1 / 3, 1 / 7], "bottlenecks": [25 / 63, 1 / 3]}
    # Loads in Mb/s on a 155 Mb/s link: only ratios matter.
    scaled = expected_termination(2, 77.5, 38.75, 77.5)
    assert scaled["long"] == pytest.approx(3 / 7, rel=1e-15)
    assert scaled["bottlenecks"] == pytest.approx([25 / 63, 1 / 3], rel=1e-15)


def test_one_bottleneck_terminates_exactly_the_load_above_the_rate():
    r = expected_termination(1, 0.5, 0.25, 0.5)
    assert r["long"] == r["short"][0] == r["bottlenecks"][0] == 1 / 3
    # Load below the termination rate: nothing is terminated.
    assert expected_termination(1, 0.2, 0.1, 0.5) == {"long": 0.0, "short": [0.0], "bottlenecks": [0.0]}


def test_the_last_bottleneck_is_terminated_optimally_and_upstream_ones_more():
    r = expected_termination(5, 0.5, 0.25, 0.5)
    assert r["bottlenecks"][-1] == pytest.approx(1 / 3, rel=1e-15)
    assert all(a > b for a, b in zip(r["bottlenecks"][:-1], r["bottlenecks"][1:], strict=True))
    assert all(a > b for a, b in zip(r["short"][:-1], r["short"][1:], strict=True))
    assert r["long"] > r["bottlenecks"][0] > 1 / 3


def test_a_per_bottleneck_list_matches_table_4_7_within_half_a_point():
    # Table 4.7 (PLT5, CBR): loads inferred from its Optimal column
    # (optimal_i = 1 - T / load_i) with the long IEA 2/3 of bottleneck 1's load.
    optimal = [0.3090, 0.3034, 0.3048, 0.3073, 0.3031]
    loads = [0.5 / (1 - o) for o in optimal]
    long_load = loads[0] * 2 / 3
    r = expected_termination(5, long_load, [x - long_load for x in loads], 0.5)
    paper_short = [0.3090, 0.1181, 0.0541, 0.0293, 0.0049]
    paper_bn = [0.3995, 0.3392, 0.3182, 0.3092, 0.3031]
    assert r["long"] == pytest.approx(0.4432, abs=0.005)
    assert r["short"] == pytest.approx(paper_short, abs=0.005)
    assert r["bottlenecks"] == pytest.approx(paper_bn, abs=0.005)


def test_a_list_and_a_scalar_agree_and_a_one_to_one_split_beats_down_more():
    assert expected_termination(3, 0.5, [0.25] * 3, 0.5) == expected_termination(3, 0.5, 0.25, 0.5)
    # Table 4.9: a smaller long share is beaten down more (relative to optimal).
    two_to_one = expected_termination(3, 0.5, 0.25, 0.5)["long"]
    one_to_one = expected_termination(3, 0.375, 0.375, 0.5)["long"]
    assert one_to_one > two_to_one


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((0, 0.5, 0.25, 0.5), "bottlenecks"),
        ((2.0, 0.5, 0.25, 0.5), "bottlenecks"),
        ((True, 0.5, 0.25, 0.5), "bottlenecks"),
        ((2, 0.0, 0.25, 0.5), "long_load"),
        ((2, float("nan"), 0.25, 0.5), "long_load"),
        ((2, 0.5, -0.1, 0.5), "short_load"),
        ((2, 0.5, [0.25], 0.5), "short_load"),
        ((2, 0.5, [0.25, "x"], 0.5), "short_load[1]"),
        ((2, 0.5, "0.25", 0.5), "short_load"),
        ((2, 0.5, 0.25, 0), "termination_rate"),
    ],
)
def test_bad_arguments_raise_config_error_naming_the_argument(args, field):
    with pytest.raises(qoslab.ConfigError) as e:
        expected_termination(*args)
    assert str(e.value).startswith(field + ":")
