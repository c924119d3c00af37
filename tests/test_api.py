"""The Python API: load, builders, overrides, run, Result tables, save/load."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import qoslab
from conftest import RED_DUMBBELL
from qoslab import Scenario, queues, topology, traffic
from qoslab.scenario import _override_text

FLOW_DTYPES = {
    "flow_id": "uint64",
    "name": "str",
    "group": "str",
    "class": "int64",
    "admitted": "bool",
    "refused": "bool",
    "sent_pkts": "uint64",
    "delivered_pkts": "uint64",
    "dropped_pkts": "uint64",
    "in_flight_pkts": "uint64",
    "throughput_bps": "float64",
    "delay_mean_s": "float64",
    "delay_p99_s": "float64",
}
QUEUE_DTYPES = {
    "queue_id": "uint64",
    "name": "str",
    "kind": "str",
    "arrivals": "uint64",
    "drops": "uint64",
    "drops_early_random": "uint64",
    "drops_forced": "uint64",
    "drops_overlimit": "uint64",
    "backlog_mean_pkts": "float64",
    "utilization": "float64",
}
SERIES_DTYPES = {"t_s": "float64", "entity_kind": "str", "entity_id": "str", "metric": "str", "value": "float64"}
EVENT_DTYPES = {"t_s": "float64", "kind": "str", "flow_id": "int64", "entity": "str"}


def test_load_validates_and_exposes_the_echo():
    sc = qoslab.load(RED_DUMBBELL)
    assert sc.name == "red_dumbbell"
    assert sc.origin == str(RED_DUMBBELL)
    assert sc.base_dir == RED_DUMBBELL.parent
    q = sc.echo["topology"]["bottleneck"]["queue"]
    assert q["type"] == "red" and float(q["min_th"]) == 5 and float(q["max_th"]) == 15


def test_load_missing_file_is_a_scenario_file_error(tmp_path):
    with pytest.raises(qoslab.ScenarioFileError) as e:
        qoslab.load(tmp_path / "nope.toml")
    assert isinstance(e.value, OSError)
    assert e.value.filename == str(tmp_path / "nope.toml")


def test_config_error_carries_diagnostics():
    with pytest.raises(qoslab.ConfigError) as e:
        Scenario.from_toml('name = "x"\nduration = "1s"\n')
    assert isinstance(e.value, ValueError)
    d = e.value.diagnostics
    assert d and set(d[0]) == {"origin", "line", "path", "message"}
    assert d[0]["origin"] == "<string>"
    assert str(e.value).startswith("<string>")


def test_toml_syntax_error_reports_its_line():
    with pytest.raises(qoslab.ConfigError) as e:
        Scenario.from_toml('name = "x"\nduration = "1s"\ntopology = [[[\n', origin="s.toml")
    assert e.value.diagnostics[0]["line"] == 3
    assert str(e.value).startswith("s.toml:3:")


def test_builders_write_toml_the_core_accepts(small_scenario):
    doc = tomllib.loads(small_scenario.to_toml())
    assert doc["topology"]["preset"] == "dumbbell"
    assert doc["topology"]["bottleneck"]["queue"] == {
        "type": "red",
        "limit": "30pkts",
        "min_th": 3,
        "max_th": 9,
        "w_q": 0.02,
    }
    assert doc["traffic"][0]["rate"] == "1Mbps" and doc["traffic"][0]["size"] == "1000B"
    assert small_scenario.echo["topology"]["sources"] == 4


def test_builders_accept_numbers_in_base_units():
    sc = Scenario.build(
        name="units",
        duration=2.5,
        topology=topology.dumbbell(
            sources=2,
            access=topology.link(rate=100_000_000, delay=0.005),
            bottleneck=topology.link(rate=10_000_000, delay=0.02, queue=queues.fifo(limit=50)),
        ),
        traffic=[traffic.poisson(name="p", flows=2, src="src*", dst="sink0", rate=1_500_000, size=500)],
        metrics={"series_interval": 0.05},
    )
    doc = tomllib.loads(sc.to_toml())
    assert doc["duration"] == "2500ms"
    assert doc["topology"]["access"] == {"rate": "100Mbps", "delay": "5ms"}
    assert doc["topology"]["bottleneck"]["queue"] == {"type": "fifo", "limit": "50pkts"}
    assert doc["traffic"][0]["rate"] == "1500kbps" and doc["metrics"]["series_interval"] == "50ms"


def test_builders_reject_wrong_types_and_bad_values():
    with pytest.raises(TypeError, match="rate"):
        topology.link(rate=[1], delay="1ms")
    with pytest.raises(ValueError, match="whole number"):
        queues.fifo(limit=2.5)
    with pytest.raises(qoslab.ConfigError) as e:
        Scenario.dumbbell(
            name="bad",
            sources=1,
            access_rate="1Mbps",
            access_delay="1ms",
            bottleneck_rate="1Mbps",
            bottleneck_delay="1ms",
            queue={"type": "blue", "limit": "5pkts"},
            duration="1s",
        )
    assert "blue" in str(e.value)
    with pytest.raises(TypeError):
        Scenario.dumbbell("bad")  # type: ignore[misc]  # keyword-only


def test_with_overrides_returns_a_new_validated_scenario():
    sc = qoslab.load(RED_DUMBBELL)
    short = sc.with_overrides("duration=3s", ("topology.bottleneck.queue.max_th", 20))
    assert short.duration == "3s" and float(short.echo["topology"]["bottleneck"]["queue"]["max_th"]) == 20
    assert sc.duration == "60s"
    again = Scenario.from_toml(short.to_toml())
    assert again.echo == short.echo
    assert sc.to_toml() == sc.text
    with pytest.raises(ValueError, match=r"key\.path=value"):
        sc.with_overrides("duration")


def test_an_override_selects_a_list_entry_by_name_as_by_index():
    """``traffic[NAME]`` is the group named NAME: the same scenario as its index; a name no
    entry has is refused, naming the names there are."""
    sc = qoslab.load(RED_DUMBBELL)
    by_name = sc.with_overrides(("traffic[cbr].flows", 3), "traffic[name=cbr].start=1s")
    assert by_name.echo == sc.with_overrides(("traffic.0.flows", 3), "traffic.0.start=1s").echo
    with pytest.raises(qoslab.ConfigError, match=r'"traffic" has no entry named "tcp"; allowed: cbr'):
        sc.with_overrides(("traffic[tcp].flows", 3))


def test_a_typed_override_writes_a_dict_as_an_inline_table():
    """A dict value (nested, or dicts in a list) is written as TOML inline tables: the same
    scenario as the text override that spells them out."""
    sc = qoslab.load(RED_DUMBBELL)
    for pair, text in (
        (
            ("topology.bottleneck.queue", {"type": "fifo", "limit": "60pkts"}),
            'topology.bottleneck.queue={type="fifo", limit="60pkts"}',
        ),
        (
            (
                "topology.bottleneck",
                {
                    "rate": "10Mbps",
                    "delay": "5ms",
                    "queue": {"type": "red", "limit": "50pkts", "min_th": 4, "max_th": 12},
                },
            ),
            'topology.bottleneck={rate="10Mbps", delay="5ms", queue={type="red", limit="50pkts", min_th=4, max_th=12}}',
        ),
        (
            ("metrics", {"bin": "10s", "series_interval": "100ms", "series": ["r0->sink0"]}),
            'metrics={bin="10s", series_interval="100ms", series=["r0->sink0"]}',
        ),
        (
            (
                "traffic",
                [
                    {
                        "name": "a",
                        "model": "cbr",
                        "flows": 10,
                        "src": "src*",
                        "dst": "sink0",
                        "rate": "1Mbps",
                        "size": "1000B",
                    },
                    {
                        "name": "b",
                        "model": "cbr",
                        "flows": 30,
                        "src": "src*",
                        "dst": "sink0",
                        "rate": "500kbps",
                        "size": "500B",
                    },
                ],
            ),
            'traffic=[{name="a", model="cbr", flows=10, src="src*", dst="sink0", rate="1Mbps", size="1000B"}, '
            '{name="b", model="cbr", flows=30, src="src*", dst="sink0", rate="500kbps", size="500B"}]',
        ),
    ):
        typed, spelled = sc.with_overrides(pair), sc.with_overrides(text)
        assert typed.echo == spelled.echo and typed.echo != sc.echo, pair
    fifo = sc.with_overrides(("topology.bottleneck.queue", {"type": "fifo", "limit": "60pkts"}))
    assert fifo.echo["topology"]["bottleneck"]["queue"]["type"] == "fifo"
    assert [g["name"] for g in sc.with_overrides(pair).echo["traffic"]] == ["a", "b"]
    # Keys that are not bare are quoted; an empty dict is an empty table.
    assert (
        _override_text(("k", {"a b": 1, "c": {}, "d": [{"e": True}]})) == 'k={ "a b" = 1, c = {}, d = [{ e = true }] }'
    )


@pytest.mark.parametrize("value", [{1, 2}, None, {"limit": None}, [{"type": {"fifo"}}], {1: "fifo"}])
def test_a_typed_override_refuses_a_value_toml_cannot_hold(value):
    sc = qoslab.load(RED_DUMBBELL)
    with pytest.raises(qoslab.ConfigError, match=r"overrides: \('topology\.bottleneck\.queue', .*must be a TOML value"):
        sc.with_overrides(("topology.bottleneck.queue", value))


def test_run_returns_typed_tables(small_result):
    for table, expected in (
        ("flows", FLOW_DTYPES),
        ("queues", QUEUE_DTYPES),
        ("series", SERIES_DTYPES),
        ("events", EVENT_DTYPES),
    ):
        df = getattr(small_result, table)
        assert isinstance(df, pd.DataFrame)
        for col, dtype in expected.items():
            assert col in df.columns, (table, col)
            assert str(df[col].dtype) == dtype, (table, col, df[col].dtype)
    assert len(small_result.flows) == 4
    assert small_result.summary["seed"] == 1
    assert small_result.scenario["name"] == "small"


def test_without_flow_histograms_only_the_percentiles_and_interarrivals_go(small_scenario, small_result):
    """metrics.flow_histograms = false: the flows table's delay percentiles are NaN and no inter-arrival
    series is written; every other column and table is the default run's, to the bit."""
    off = small_scenario.with_overrides(("metrics.flow_histograms", False))
    assert off.echo["metrics"]["flow_histograms"] is False and "flow_histograms" not in small_scenario.echo["metrics"]
    res = qoslab.run(off, seed=1)
    f, base = res.flows, small_result.flows
    assert f["delay_p50_s"].isna().all() and f["delay_p99_s"].isna().all()
    assert base["delay_p50_s"].notna().all()
    same = [c for c in base.columns if c not in ("delay_p50_s", "delay_p99_s")]
    pd.testing.assert_frame_equal(f[same], base[same])
    pd.testing.assert_frame_equal(res.queues, small_result.queues)
    metrics, default_metrics = (set(r.series["metric"].astype(str)) for r in (res, small_result))
    assert "interarrival_count" not in metrics and "interarrival_count" in default_metrics
    kept = small_result.series[small_result.series["metric"].astype(str) != "interarrival_count"]
    assert len(res.series) == len(kept)


def test_run_conserves_packets_per_flow(small_result):
    f = small_result.flows
    # in_flight_pkts is counted from the packets held at the end, not derived.
    assert (f["sent_pkts"] == f["delivered_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]).all()
    assert int(f["sent_pkts"].sum()) > 0


def test_result_helpers(small_result):
    b = small_result.bottleneck
    assert b is not None
    row = small_result.queue(b)
    assert int(row["arrivals"]) > 0
    s = small_result.metric(b, "backlog_pkts")
    assert list(s.columns) == ["t_s", "value"] and len(s) > 0 and s["t_s"].is_monotonic_increasing
    with pytest.raises(KeyError, match="queues:"):
        small_result.queue("nowhere")


def test_save_and_load_round_trip(small_result, tmp_path):
    out = small_result.save(tmp_path / "res")
    assert sorted(p.name for p in out.iterdir()) == [
        ".qoslab",  # the marker: qoslab wrote this folder and may replace it
        "events.parquet",
        "flows.parquet",
        "queues.parquet",
        "series.parquet",
        "summary.json",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["res"]  # no temporary folder left behind
    text = (out / "summary.json").read_text()
    assert json.loads(text) == small_result.summary and text.startswith('{\n  "')
    assert list(json.loads(text)) == list(small_result.summary)  # the core's key order is kept
    back = qoslab.Result.load(out)
    assert back.summary == small_result.summary and back.path == out
    for t in ("flows", "queues", "series", "events"):
        pd.testing.assert_frame_equal(back.table(t), small_result.table(t))


def test_a_result_made_from_its_files_gives_the_same_tables_and_saves_the_same_bytes(small_result, tmp_path):
    """What a worker encodes (or a store holds) is the result: its tables read back equal, and
    its folder is those bytes, not a second encoding; a missing or damaged file is a ValueError."""
    files = small_result.to_files()
    back = qoslab.Result.from_files(files)
    assert back.summary == small_result.summary
    for t in ("flows", "queues", "series", "events"):
        pd.testing.assert_frame_equal(back.table(t), small_result.table(t))
    out = back.save(tmp_path / "res")
    assert {n: (out / n).read_bytes() for n in files} == files
    with pytest.raises(ValueError, match=r"series\.parquet is missing"):
        qoslab.Result.from_files({k: v for k, v in files.items() if k != "series.parquet"})
    with pytest.raises(ValueError, match="do not read"):
        qoslab.Result.from_files({**files, "flows.parquet": b"not parquet"})


def test_save_replaces_an_existing_folder_only_when_complete(small_result, tmp_path, monkeypatch):
    target = tmp_path / "res"
    small_result.save(target)  # a result qoslab wrote: it may replace it
    (target / "stale.txt").write_text("old")
    small_result.save(target)
    assert not (target / "stale.txt").exists() and (target / "flows.parquet").exists()

    import pyarrow.parquet as pq

    calls = []

    def failing(table, where, **kw):
        calls.append(where)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(table, where, **kw)

    real = pq.write_table
    monkeypatch.setattr(pq, "write_table", failing)
    fresh = qoslab.Result(
        small_result.summary, {t: small_result.arrow(t) for t in ("flows", "queues", "series", "events")}
    )
    with pytest.raises(OSError, match="disk full"):
        fresh.save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    assert (target / "series.parquet").exists()  # the previous complete result is untouched


def test_load_of_an_incomplete_folder_fails(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="not a complete result folder"):
        qoslab.Result.load(tmp_path)


def test_run_accepts_a_path_with_overrides_and_writes_out(tmp_path):
    res = qoslab.run(RED_DUMBBELL, overrides=["duration=2s"], seed=5, out=tmp_path / "r")
    assert res.summary["seed"] == 5 and res.scenario["duration"] == "2s"
    assert (tmp_path / "r" / "flows.parquet").exists()
    with pytest.raises(ValueError, match="seed"):
        qoslab.run(RED_DUMBBELL, seed=-1)


def test_progress_is_reported_and_ends_at_one():
    seen: list[float] = []
    qoslab.run(RED_DUMBBELL, overrides=["duration=120s"], progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert all(0.0 <= x <= 1.0 for x in seen) and seen == sorted(seen)


def test_an_exception_in_the_progress_callback_stops_the_run():
    class Stop(Exception):
        pass

    def cb(frac: float) -> None:
        raise Stop(frac)

    with pytest.raises(Stop) as e:
        qoslab.run(RED_DUMBBELL, overrides=["duration=600s"], progress=cb)
    assert e.value.args[0] < 1.0  # raised from inside the run, not by the final call


def test_native_columns_are_numpy_arrays_or_dictionary_encoded_strings(small_scenario):
    out = qoslab._core.run(small_scenario.held(), 1)
    assert isinstance(out["summary"], str)
    for t in ("flows", "queues", "series", "events"):
        for name, col in out[t].items():
            assert isinstance(col, (np.ndarray, tuple)), (t, name)
            if isinstance(col, np.ndarray):
                assert col.dtype.str in ("<f8", "<i8", "<u8", "|b1"), (t, name, col.dtype)
                assert col.flags.writeable
            else:
                codes, values = col
                # The narrowest width that holds the codes (a few metric names: one byte).
                width = 1 if len(values) <= 256 else 2 if len(values) <= 65536 else 4
                assert codes.dtype.kind == "u" and codes.dtype.itemsize == width, (t, name, codes.dtype)
                assert all(isinstance(x, str) for x in values)
                # Each distinct string once, each used, in first-seen order.
                assert len(set(values)) == len(values)
                if len(codes):
                    first = dict.fromkeys(codes.tolist())
                    assert list(first) == list(range(len(values))), (t, name)


def test_string_columns_are_arrow_dictionaries_and_pandas_strings(small_scenario, tmp_path):
    """Compact storage end to end: the series' names are 4-byte
    codes from the core to the Parquet file, and the same string columns as
    before in pandas (not categoricals)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    res = qoslab.run(small_scenario)
    for t in ("flows", "queues", "series", "events"):
        schema = res.arrow(t).schema
        for f in schema:
            assert not pa.types.is_string(f.type), (t, f.name)
        strings = [f for f in schema if pa.types.is_dictionary(f.type)]
        assert all(f.type.index_type == pa.int32() and f.type.value_type == pa.string() for f in strings)
    series = res.series
    import pandas as pd

    for col in ("entity_kind", "entity_id", "metric"):
        assert pd.api.types.is_string_dtype(series[col]) and not isinstance(series[col].dtype, pd.CategoricalDtype)
    assert isinstance(series["metric"].iloc[0], str)
    res.save(tmp_path / "r")
    on_disk = pq.read_table(tmp_path / "r" / "series.parquet")
    assert pa.types.is_dictionary(on_disk.schema.field("entity_id").type)
    back = qoslab.Result.load(tmp_path / "r")
    assert back.series.equals(series)


def test_version_and_schema():
    assert qoslab.__version__ == qoslab.version() == qoslab._core.version()
    schema = json.loads(qoslab.schema())
    assert isinstance(schema, dict) and "properties" in schema
    assert Path(qoslab.__file__).with_name("py.typed").exists()
    assert Path(qoslab.__file__).with_name("_core.pyi").exists()


def test_the_held_scenario_pickles_as_its_echo_and_runs_the_same(small_scenario):
    """A sweep's worker gets the validated scenario, not the text: read back from its echo
    (no validation again) it is equal and gives the same run."""
    import pickle

    held = small_scenario.held()
    back = pickle.loads(pickle.dumps(held))
    assert back == held and back.origin == held.origin and back.overrides == held.overrides
    a, b = qoslab._core.run(held, 3), qoslab._core.run(back, 3)
    drop = lambda s: {k: v for k, v in json.loads(s).items() if k != "loop_wall_s"}  # noqa: E731
    assert drop(a["summary"]) == drop(b["summary"])
    # A pickle from another build (its key differs) is loaded and validated instead.
    restore, args = held.__reduce__()
    assert restore(*args[:6], "another build", "{}") == held


def test_overrides_apply_to_the_held_scenario_and_the_model_has_numbers(small_scenario):
    s = small_scenario.with_overrides("duration=2s", ("topology.bottleneck.rate", "5Mbps"))
    assert s.held().overrides == ["duration=2s", 'topology.bottleneck.rate="5Mbps"']
    m = s.model
    assert m["duration_ns"] == 2_000_000_000
    bn = m["links"][m["bottlenecks"][0]]
    assert (bn["a"], bn["b"], bn["rate_bps"]) == ("r0", "sink0", 5_000_000)
    f = m["groups"][0]["flows"][0]
    assert f["hops"][0] == f["src"] and f["hops"][-1] == f["dst"]
    assert f["delay_ns"] == sum(m["links"][i]["delay_ns"] for i in f["route"])
    with pytest.raises(qoslab.ConfigError, match="duration"):
        small_scenario.with_overrides("duration=0s")


def test_units_names_and_metric_code_come_from_the_core():
    from qoslab import _core

    assert _core.parse_rate("25Mbps") == 25_000_000 and _core.format_rate(25_000_000) == "25Mbps"
    assert _core.parse_duration("150ms") == 150_000_000 and _core.format_duration(20_000_000) == "20ms"
    assert _core.parse_size("1TiB") == 2**40
    with pytest.raises(ValueError, match="allowed"):
        _core.parse_rate("25mbps")
    names = _core.names()
    assert names["drop_reasons"][0] == "overlimit" and "flow_start" in names["event_kinds"]
    assert [c for c, _ in names["tables"]["events"]] == [
        "t_s",
        "kind",
        "flow_id",
        "entity",
        "rule",
        "estimate",
        "threshold",
        "detail",
    ]
    cols = dict(_core.delay_columns([10_000_000, 30_000_000]))
    assert cols["delay_mean_s"] == pytest.approx(0.02) and cols["jitter_rfc3550_s"] == pytest.approx(0.02 / 16)
    assert _core.jain_index([1.0, 1.0]) == 1.0 and _core.jain_index([0.0, 0.0]) == 1.0
