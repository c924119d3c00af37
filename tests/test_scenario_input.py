"""Bad scenario input that used to abort or mislead: the
resource estimate and its limits, replay files read by validation."""

from __future__ import annotations

import pytest

import qoslab
from conftest import BAD, RED_DUMBBELL, cli

TCP_HUGE = BAD / "tcp_window_beyond_memory.toml"  # estimated 32 GiB
POISSON_HUGE = BAD / "arrivals_rate_beyond_memory.toml"
BATCH_HUGE = BAD / "arrivals_batch_mean_beyond_memory.toml"


def _clean(p) -> None:
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr, p.stderr
    assert "memory allocation" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    "scenario, field",
    [
        (TCP_HUGE, "traffic.0.tcp.init_window"),
        (POISSON_HUGE, "traffic.0.arrivals.rate"),
        (BATCH_HUGE, "traffic.0.arrivals.batch_mean"),
    ],
    ids=["tcp_windows", "poisson_rate", "batch_mean"],
)
def test_absurd_sizes_exit_2_naming_the_field_not_134(scenario, field, tmp_path):
    for cmd in ("validate", "run"):
        out = ["--out", str(tmp_path / "o")] if cmd == "run" else []
        p = cli(cmd, str(scenario), *out, cwd=tmp_path)
        assert p.returncode == 2, (cmd, p.returncode, p.stderr)
        assert f": {field}: the run would need about" in p.stderr, p.stderr
        assert "allowed: at most 8.0 GiB (raise the limit with --max-memory" in p.stderr, p.stderr
        _clean(p)
    assert not (tmp_path / "o").exists()


def test_max_memory_and_max_events_raise_or_lower_the_limits(tmp_path):
    # 32 GiB estimated: refused below, accepted above (validate only: never run it).
    assert cli("validate", str(TCP_HUGE), "--max-memory", "31GiB").returncode == 2
    p = cli("validate", str(TCP_HUGE), "--max-memory", "33GiB")
    assert p.returncode == 0 and "valid scenario" in p.stdout, p.stderr
    # A small run refused by a tiny events limit, on run as on validate.
    for cmd in ("validate", "run"):
        args = [cmd, str(RED_DUMBBELL), "--max-events", "1000"] + (
            ["--out", str(tmp_path / "o")] if cmd == "run" else []
        )
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2 and "events (estimated)" in p.stderr and "--max-events" in p.stderr, p.stderr
        _clean(p)
    assert not (tmp_path / "o").exists()


def test_the_python_api_takes_the_same_limits(small_scenario):
    with pytest.raises(qoslab.ConfigError) as e:
        qoslab.load(TCP_HUGE)
    assert "traffic.0.tcp.init_window" in str(e.value)
    s = qoslab.load(TCP_HUGE, max_memory=33 * 2**30)
    assert s.limits == (33 * 2**30, None)
    assert s.with_overrides("duration=4s").limits == s.limits
    with pytest.raises(qoslab.ConfigError) as e:
        qoslab.run(small_scenario, max_events=10)
    assert "events (estimated)" in str(e.value)
    with pytest.raises(qoslab.ConfigError) as e:
        qoslab.run(small_scenario, max_memory=-1)
    assert "max_memory" in str(e.value)
    assert qoslab.run(small_scenario, max_events=10**9).summary["events"] > 0


def test_validate_reads_replay_files_and_names_binary_ones(tmp_path):
    p = cli("validate", str(BAD / "replay_binary.toml"))
    assert p.returncode == 2, p.stderr
    assert f"{BAD / 'replay_binary.csv'}:1: traffic.0.arrivals.file: is not text: byte 0x89" in p.stderr, p.stderr
    assert "Errno" not in p.stderr
    _clean(p)
