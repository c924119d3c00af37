"""The command line: ``qoslab run | sweep | show | plot | report | compare | validate | schema |
reproduce | cac | testbed | completion | version`` (and ``qoslab --version``).

Shell completion: ``eval "$(qoslab completion bash)"`` (or ``zsh``, ``fish``), from
argcomplete.

Exit codes: 0 success; 2 bad input (invalid scenario, unreadable file, bad
flags: nothing is written); 1 a failure of qoslab itself; 130 interrupted.
Errors go to stderr as ``file:line: field.path: problem; allowed: ...``,
never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._progress import Progress, progress_mode

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Exit code of a run stopped by SIGTERM (128 + 15, as a shell reports it).
EXIT_TERMINATED = 143


def _seed(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}; allowed: an integer from 0 to 2^64-1") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"seed {v} out of range; allowed: 0 to 2^64-1")
    return v


def _nonempty(text: str) -> str:
    """An --out path: not empty (an empty name would mean the working folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; allowed: a path, e.g. results/NAME")
    return text


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}; allowed: an integer >= 1") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} is too small; allowed: an integer >= 1")
    return v


def _memory(text: str) -> int:
    """--max-memory: a size such as 16GiB or 500MB, read by the core (a plain number is bytes)."""
    from . import _core

    try:
        v = int(text) if text.strip().isdigit() else _core.parse_size(text)
    except ValueError:
        v = 0
    if v < 1 or v >= 2**64:
        raise argparse.ArgumentTypeError(
            f"invalid --max-memory {text!r}; allowed: a size such as 16GiB, 500MB or 8589934592 (bytes)"
        )
    return v


def _events(text: str) -> int:
    """--max-events: a count such as 1e11 or 50000000000."""
    try:
        f = float(text)
    except ValueError:
        f = 0.0
    if not 1 <= f < 2**64:
        raise argparse.ArgumentTypeError(f"invalid --max-events {text!r}; allowed: a count such as 1e11 (at least 1)")
    return int(f)


_SET_HELP = "override a scenario field (repeatable); a list entry by index or name: traffic.0, traffic[cbr]"


def _overrides(p: argparse.ArgumentParser, text: str = _SET_HELP) -> None:
    """The ``--set KEY.PATH=VALUE`` option (repeatable), into ``overrides``."""
    p.add_argument(
        "--set", dest="overrides", action="append", default=[], type=_override, metavar="KEY.PATH=VALUE", help=text
    )


def _limits(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-memory",
        type=_memory,
        metavar="SIZE",
        help="refuse the scenario if its run is estimated to need more memory (default 8GiB)",
    )
    p.add_argument(
        "--max-events",
        type=_events,
        metavar="N",
        help="refuse the scenario if its run is estimated to take more events (default 1e10)",
    )


def _override(text: str) -> str:
    if "=" not in text or text.startswith("="):
        raise argparse.ArgumentTypeError(f"invalid --set {text!r}; allowed: key.path=value, e.g. duration=10s")
    return text


class _Version(argparse.Action):
    """``--version``: the version, read from the native module only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, v: Any, o: str | None = None) -> None:
        import qoslab

        print(f"qoslab {qoslab.__version__}")
        parser.exit()


class _ReproduceHelp(argparse.Action):
    """``reproduce --help``: the usage, then every reproduction with its title (their modules
    are imported only when this help is asked for)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, v: Any, o: str | None = None) -> None:
        from . import reproduce as rp

        lines = ["reproductions (NAME):"]
        for n in rp.names():
            lines.append(f"  {n:<10} {getattr(rp.module(n), 'TITLE', '')}")
        lines.append(f"  {'all':<10} every one of them, in this order")
        parser.epilog = "\n".join(lines)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.print_help()
        parser.exit()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="qoslab", description="Router quality-of-service laboratory.")
    p.add_argument("--version", action=_Version, help="print the qoslab version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    r = sub.add_parser(
        "run",
        help="run a scenario and write its results",
        description="Run a scenario; write summary.json and Parquet tables to --out.",
    )
    r.add_argument("file", metavar="FILE", help="scenario TOML file")
    r.add_argument("--out", type=_nonempty, metavar="DIR", help="result folder (default: results/<scenario name>/)")
    r.add_argument("--seed", type=_seed, metavar="N", help="seed (default: the scenario's)")
    _overrides(r)
    r.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    _limits(r)
    r.add_argument(
        "--progress",
        choices=["bar", "plain", "none"],
        help="progress on stderr: a bar (default on a terminal), a plain line every 5 s (default otherwise), or none",
    )
    r.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing result of another seed or scenario in --out (default: refuse)",
    )
    r.add_argument(
        "--record-arrivals",
        dest="record",
        action="append",
        default=[],
        metavar="GROUP",
        help="also write GROUP's flow starts and lifetimes as a replay CSV, OUT/arrivals_GROUP.csv (repeatable)",
    )

    sw = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of overrides x seeds, on every core or Dask",
        description="Run FILE (a scenario or a sweep file) for every point of the grid and every "
        "seed; store each run as it finishes (an interrupted sweep resumes); write "
        "the combined Parquet dataset and per-point means and 95% CIs to --out.",
    )
    sw.add_argument("file", metavar="FILE", help="scenario TOML file, or a sweep file with a [sweep] table")
    sw.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY.PATH=V1,V2,...",
        help="a grid axis: a --set key path and a comma list (1e-4,1e-3; 5ms,10ms) or an integer "
        "range a..b (repeatable)",
    )
    sw.add_argument(
        "--seeds", type=_positive, metavar="N", help="seeds 1..N per point (default: the sweep file's, else 1)"
    )
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_positive, metavar="N", help="local worker processes (default: every core)")
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a Dask distributed scheduler, e.g. tcp://head:8786 (dask-jobqueue: SLURM, PBS)",
    )
    _overrides(sw, "override a scenario field at every point (repeatable)")
    _limits(sw)
    sw.add_argument(
        "--out", type=_nonempty, metavar="DIR", help="sweep folder (default: results/sweep_<scenario name>/)"
    )
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress and no table; errors only")
    sw.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a sweep folder that holds a sweep of another scenario (default: refuse)",
    )

    sh = sub.add_parser(
        "show",
        help="every queue, group and admission count of a result",
        description="Print a result's queues (tc -s qdisc-like), traffic groups and admission counts.",
    )
    sh.add_argument("result", metavar="RESULT", help="result folder (qoslab run --out, or a sweep's runs/KEY)")
    sh.add_argument("--json", action="store_true", help="print JSON for scripts")
    sh.add_argument("--all", action="store_true", help="also queues that saw no packet")

    pl = sub.add_parser(
        "plot",
        help="plot a queue or a group's time series, or a delay/inter-arrival CDF",
        description="Plot one thing of a result; to PNG or SVG with --out, else in a window.",
    )
    pl.add_argument("result", metavar="RESULT", help="result folder")
    pl.add_argument("--queue", metavar="NAME", help="a queue, e.g. r0->sink0")
    pl.add_argument("--flows", metavar="GROUP", help="a traffic group")
    pl.add_argument(
        "--metric",
        metavar="M",
        help="queue: red_avg, backlog_pkts, ...; flows: throughput, delivered_pkts, cwnd_pkts, ...",
    )
    pl.add_argument("--cdf", choices=["delay", "interarrival"], help="a CDF (of --flows GROUP, or of all flows)")
    pl.add_argument(
        "--out",
        type=_nonempty,
        metavar="FILE",
        help="FILE.png or FILE.svg (default: show in a window; without a display, RESULTNAME_WHAT.png here)",
    )

    rr = sub.add_parser(
        "report",
        help="a self-contained HTML page of a run, a sweep or a reproduction",
        description="Write one HTML file (tables, inlined plots, the scenario, the claims) for "
        "a result folder, a sweep folder or a reproduction folder.",
    )
    rr.add_argument("dir", metavar="DIR", help="a result, sweep or reproduction folder")
    rr.add_argument("--out", type=_nonempty, metavar="FILE", help="the HTML file (default: DIR/report.html)")

    v = sub.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Validate a scenario; print every problem found.",
    )
    v.add_argument("file", metavar="FILE", help="scenario TOML file")
    _overrides(v)
    v.add_argument("--echo", action="store_true", help="print the scenario with defaults filled in (JSON)")
    _limits(v)

    sub.add_parser(
        "schema",
        help="print the JSON Schema of the scenario format",
        description="Print the JSON Schema of the scenario format (for editors: completion and checks "
        "of scenario files), e.g. qoslab schema > qoslab.schema.json.",
    )

    rp = sub.add_parser(
        "reproduce",
        help="reproduce a paper's numbers and claims",
        description="Run a reproduction (or all) and write cells.csv (the paper's numbers beside qoslab's, "
        "judged), results.json, report.md and figures to OUT/<name>/; print the scores. With 'all', "
        "OUT/scores.json holds every paper's score and the overall one.",
        add_help=False,
    )
    rp.add_argument("-h", "--help", action=_ReproduceHelp, help="show this help (and the reproductions) and exit")
    rp.add_argument("name", metavar="NAME", help="a reproduction (listed below), or 'all'")
    rp.add_argument("--quick", action="store_true", help="short runs, 3 seeds by default")
    rp.add_argument(
        "--testbed",
        action="store_true",
        help="also run the paper's measured set-up on real packets (root; edge: Table I), its cells in "
        "cells_testbed.csv beside the simulated ones",
    )
    rp.add_argument(
        "--seeds",
        type=_positive,
        metavar="N",
        help="replications with seeds 1..N (default: 3, or the reproduction's own, e.g. dcbt 5; quick: 3)",
    )
    rp.add_argument("--out", type=_nonempty, default="results", metavar="DIR", help="output folder (default: results/)")
    rp.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing OUT/<name>/ of another mode or seed list (default: refuse)",
    )
    rstore = rp.add_mutually_exclusive_group()
    rstore.add_argument(
        "--store",
        type=_nonempty,
        metavar="DIR",
        help="keep every run's result or reduced numbers here, so that the same command run again (after "
        "an interruption, say) recomputes none of the runs it holds (default: OUT/.store)",
    )
    rstore.add_argument("--no-store", action="store_true", help="keep nothing: every run is computed")
    rwhere = rp.add_mutually_exclusive_group()
    rwhere.add_argument(
        "--jobs",
        type=_positive,
        metavar="N",
        help="local worker processes for the variants and seeds (default: every core)",
    )
    rwhere.add_argument("--scheduler", metavar="ADDRESS", help="run the variants and seeds on a Dask scheduler")
    _limits(rp)

    c = sub.add_parser(
        "cac",
        help="CAC calculator for shaped TCP: rho, N_max, Erlang-B",
        description="rho = 2B/(2B - ln IPLR) and N_max = floor(rho C / R_req) ([Tarasiuk05]); with "
        "--arrival-rate and --holding the Erlang-B blocking of N_max servers; with "
        "--blocking the arrival rate that gives it.",
    )
    c.add_argument("--capacity", required=True, metavar="RATE", help="link capacity C, e.g. 100Mbps")
    c.add_argument("--buffer", required=True, metavar="PKTS", help="buffer B in packets, e.g. 10")
    c.add_argument("--iplr", required=True, metavar="P", help="target packet loss ratio, e.g. 1e-3")
    c.add_argument("--rate", required=True, metavar="RATE", help="requested rate R_req, e.g. 1Mbps")
    c.add_argument("--holding", metavar="DUR", help="mean holding time, e.g. 10s (file / R_req)")
    c.add_argument("--arrival-rate", metavar="PER_S", help="connection requests per second")
    c.add_argument("--blocking", metavar="P", help="target blocking: solve for the arrival rate")
    c.add_argument("--json", action="store_true", help="print the answers as JSON")

    tb = sub.add_parser(
        "testbed",
        help="run a scenario on real packets across network namespaces (root)",
        description="The testbed (docs/testbed.md): the scenario's hosts as network namespaces, each emulated "
        "link as a qoslab-router between them, real UDP generators and sinks and kernel TCP; the same result "
        "folder as `qoslab run`.",
    )
    tsub = tb.add_subparsers(dest="testbed_command", metavar="ACTION", required=True)
    tr = tsub.add_parser("run", help="run a scenario on the testbed and write its result")
    tr.add_argument("file", metavar="FILE", help="scenario TOML file")
    tr.add_argument(
        "--out", type=_nonempty, metavar="DIR", help="result folder (default: results/<scenario name>-testbed/)"
    )
    tr.add_argument("--seed", type=_seed, metavar="N", help="seed (default: the scenario's)")
    _overrides(tr)
    tr.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    tr.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing result of another seed or scenario in --out (default: refuse)",
    )
    tr.add_argument("--keep", metavar="DIR", help="copy the processes' raw files (specs, records, router stats) here")
    tc = tsub.add_parser("clean", help="remove stale testbeds (namespaces of runs whose process is gone)")
    tc.add_argument("--all", action="store_true", help="remove every testbed, running ones too")
    tsub.add_parser("check", help="say whether this machine can run the testbed, and why not")

    cmp = sub.add_parser(
        "compare",
        help="two results side by side, differences flagged outside the testbed tolerances",
        description="Per traffic group and per queue: throughput (±5 %), loss (±1 point), mean delay "
        "(±(1 ms + 10 %)), percentiles and drops by reason of result B against result A.",
    )
    cmp.add_argument("a", metavar="A", help="reference result folder (e.g. the simulation)")
    cmp.add_argument("b", metavar="B", help="result folder to check (e.g. the testbed)")
    cmp.add_argument("--json", action="store_true", help="print the comparison as JSON")
    cmp.add_argument("--check", action="store_true", help="exit 1 when a figure is outside its tolerance")

    sub.add_parser(
        "version",
        help="print the qoslab version",
        description="Print the qoslab version (the same as qoslab --version).",
    )
    comp = sub.add_parser(
        "completion",
        help="print the shell code for tab completion",
        description="Print the code that makes your shell complete qoslab's commands and options (argcomplete). "
        'bash: eval "$(qoslab completion bash)" in ~/.bashrc; zsh: the same in ~/.zshrc; fish: '
        "qoslab completion fish > ~/.config/fish/completions/qoslab.fish.",
    )
    comp.add_argument("shell", choices=["bash", "zsh", "fish"], help="the shell")
    return p


def _err(msg: str) -> None:
    sys.stderr.write(msg.rstrip("\n") + "\n")


def _warn(sc: Any) -> None:
    """A scenario's warnings (legal input, almost surely a mistake) on stderr, one a line."""
    for w in sc.warnings:
        _err(f"warning: {w}")


def _stdout_console() -> Any:
    """The console of tables on stdout: a terminal's width, or off a terminal (a pipe, a
    file) wide enough that no record is wrapped in the middle. A reader that goes away
    (``qoslab show ... | head -1``) is not a failure: rich's own handling exits 1, this one
    hands the ``BrokenPipeError`` to :func:`main`, which exits 0."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    if sys.stdout.isatty():
        return _Console(highlight=False)
    return _Console(highlight=False, width=1000, no_color=True)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _fmt_int(x: Any) -> str:
    try:
        return f"{int(x):,}"
    except (TypeError, ValueError):
        return "?"


def _summary_table(res: Any, out: Path) -> Any:
    from rich.table import Table

    s = res.summary
    t = Table(title=f"{res.name}: seed {res.seed}", show_header=False, title_justify="left")
    t.add_column("what", style="bold")
    t.add_column("value", justify="right")
    sim = s.get("sim_time_s")
    wall = s.get("loop_wall_s")
    events = s.get("events")
    if "testbed" in s:  # real packets on a wall clock: no simulated time, no event loop
        if sim is not None:
            t.add_row("traffic time (wall clock)", f"{float(sim):g} s")
        if events is not None:
            t.add_row("packet records", _fmt_int(events))
        if wall is not None:
            t.add_row("testbed run (wall clock)", f"{float(wall):.3f} s")
    else:
        if sim is not None:
            t.add_row("simulated time", f"{float(sim):g} s")
        if events is not None:
            t.add_row("events", _fmt_int(events))
        if wall is not None:
            rate = f" ({float(events) / float(wall):,.0f} events/s)" if events and float(wall) > 0 else ""
            t.add_row("event loop", f"{float(wall):.3f} s{rate}")
    f = res.flows
    if len(f):
        sent, dlv, drp = (int(f[c].sum()) for c in ("sent_pkts", "delivered_pkts", "dropped_pkts"))
        t.add_row("flows", _fmt_int(len(f)))
        t.add_row("packets sent / delivered / dropped", f"{sent:,} / {dlv:,} / {drp:,}")
    b = res.bottleneck
    if b is not None:
        try:
            q = res.queue(b)
        except KeyError:
            q = None
        if q is not None:
            reasons = [c for c in q.index if c.startswith("drops_") and int(q[c]) > 0]
            why = ", ".join(f"{c.removeprefix('drops_')} {int(q[c]):,}" for c in reasons)
            t.add_row(f"bottleneck {b}: arrivals", _fmt_int(q["arrivals"]))
            t.add_row(f"bottleneck {b}: drops", f"{int(q['drops']):,}" + (f" ({why})" if why else ""))
            t.add_row(f"bottleneck {b}: utilization", f"{float(q['utilization']):.4f}")
            t.add_row(f"bottleneck {b}: mean backlog", f"{float(q['backlog_mean_pkts']):.2f} pkts")
    t.add_row("results", str(out))
    return t


def _folder_name(name: str) -> str:
    """A scenario name as a single, safe folder name (no separators, no leading dots)."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".") or "scenario"


def cmd_run(a: argparse.Namespace) -> int:
    import qoslab

    sc = qoslab.load(a.file, overrides=a.overrides, max_memory=a.max_memory, max_events=a.max_events)
    _warn(sc)
    if a.record:
        from .recording import check_groups

        check_groups(sc.echo, a.record)
    out = Path(a.out) if a.out is not None else Path("results") / _folder_name(sc.name)
    seed = a.seed if a.seed is not None else sc.seed
    # Before the run: a destination qoslab may not replace, or cannot write, or that holds
    # another seed's or scenario's result, or that another qoslab is writing, loses nothing.
    # The lock and the temporary folder are held until the result is swapped in.
    from ._atomic import Destination, run_identity

    with Destination(out, option="--out", identity=run_identity(sc.echo, seed), overwrite=a.overwrite) as dest:
        bar = Progress(progress_mode(quiet=a.quiet, choice=a.progress), label=sc.name)
        try:
            res = qoslab.run(sc, seed=seed, progress=bar)
        finally:
            bar.close()
        res.write_into(dest.tmp)
        if a.record:
            from .recording import record_group

            for g in a.record:
                record_group(res, sc.echo, g, dest.tmp)
        dest.commit()
    res._path = out
    if not a.quiet:
        _stdout_console().print(_summary_table(res, out))
    return EXIT_OK


def cmd_sweep(a: argparse.Namespace) -> int:
    from . import sweeps
    from .errors import config_error
    from .executor import open_executor

    grid: dict[str, str] = {}
    for text in a.grid:
        key, values = sweeps.parse_grid_option(text)
        if key in grid:
            raise config_error("--grid", f"{key} is given twice; allowed: each key once, with all its values")
        grid[key] = ",".join(values)  # override text, as --set takes it
    # Everything is validated, and the scheduler reached, before anything is written.
    p = sweeps.plan(
        a.file, grid=grid, seeds=a.seeds, overrides=a.overrides, max_memory=a.max_memory, max_events=a.max_events
    )
    _warn(p.scenario)
    out = Path(a.out) if a.out is not None else sweeps.default_out(p)
    with sweeps.sweep_folder(p, out, overwrite=a.overwrite), open_executor(jobs=a.jobs, scheduler=a.scheduler) as ex:
        reporter = None if a.quiet else sweeps.console_progress(len(p.jobs))
        try:
            o = sweeps.run_plan(p, out=out, executor=ex, progress=reporter)
        finally:
            if reporter is not None:
                reporter.close()
    if not a.quiet:
        console = _stdout_console()
        console.print(_sweep_table(p, o.summary))
        points = len(p.jobs) // len(p.seeds)
        console.print(
            f"sweep {p.scenario.name}: {len(p.jobs)} runs ({points} point{'s' if points != 1 else ''} x "
            f"{len(p.seeds)} seed{'s' if len(p.seeds) != 1 else ''}): {o.executed} executed, "
            f"{o.reused} from the store, in {o.wall_s:.1f} s on {o.executor} -> {o.out}"
        )
    return EXIT_OK


def _sweep_table(p: Any, summ: Any) -> Any:
    """Per point and group: throughput, loss and mean delay (mean ± 95 % CI over seeds)."""
    import math

    from rich.table import Table

    t = Table(title="per point (mean ± 95% CI over seeds)", title_justify="left")
    for k in p.keys:
        t.add_column(k.rsplit(".", 1)[-1], justify="right")
    for col in ("group", "throughput (Mb/s)", "loss (%)", "delay mean (ms)"):
        t.add_column(col, justify="left" if col == "group" else "right")
    g = summ[summ["entity_kind"] == "group"]

    def cell(rows: Any, metric: str, scale: float) -> str:
        r = rows[rows["metric"] == metric]
        if r.empty or not math.isfinite(float(r["mean"].iloc[0])):
            return "-"
        m, ci = float(r["mean"].iloc[0]) * scale, float(r["ci95"].iloc[0]) * scale
        return f"{m:.3f}" + (f" ± {ci:.3f}" if math.isfinite(ci) else "")

    for name, rows in g.groupby([*p.keys, "entity"], sort=False):
        vals = name if isinstance(name, tuple) else (name,)
        t.add_row(
            *(str(v) for v in vals),
            cell(rows, "throughput_bps", 1e-6),
            cell(rows, "loss", 100.0),
            cell(rows, "delay_mean_s", 1e3),
        )
    return t


def _load_result(path: str) -> Any:
    from .errors import config_error
    from .result import Result

    try:
        return Result.load(path)
    except OSError as e:
        why = e.strerror or str(e)
        prefix = f"{path}: "
        why = why.removeprefix(prefix).removeprefix(f"{Path(path)}: ")
        if "is missing" in why:
            why = (
                f"not a result folder ({e.filename} is missing); allowed: a folder written by qoslab run --out "
                "or Result.save"
            )
        raise config_error("RESULT", f"{path}: {why}") from None


def cmd_show(a: argparse.Namespace) -> int:
    from . import show

    res = _load_result(a.result)
    if a.json:
        import json

        print(json.dumps(show.as_json(res, idle=a.all), indent=2, allow_nan=False))
        return EXIT_OK
    console = _stdout_console()
    for r in show.renderables(res, idle=a.all):
        console.print(r)
    return EXIT_OK


def cmd_plot(a: argparse.Namespace) -> int:
    from .plot import default_out, has_display, plot

    res = _load_result(a.result)
    out = a.out
    if out is None and not has_display():
        out = str(default_out(res, queue=a.queue, flows=a.flows, metric=a.metric, cdf=a.cdf))
        _err(f"qoslab plot: no display to show the plot on; writing {out} (choose the file with --out)")
    plot(res, queue=a.queue, flows=a.flows, metric=a.metric, cdf=a.cdf, out=out)
    if out:
        print(out)
    return EXIT_OK


def cmd_report(a: argparse.Namespace) -> int:
    from .report import write_report

    path = write_report(a.dir, out=a.out)
    print(path)
    return EXIT_OK


def cmd_testbed(a: argparse.Namespace) -> int:
    from . import testbed

    if a.testbed_command == "clean":
        removed = testbed.clean(only_dead=not a.all)
        print(f"removed {len(removed)} namespaces" + (f": {', '.join(removed)}" if removed else ""))
        return EXIT_OK
    if a.testbed_command == "check":
        why = testbed.skip_reason()
        print("the testbed can run here" if why is None else f"the testbed cannot run here: {why}")
        return EXIT_OK if why is None else EXIT_INPUT
    import qoslab

    from ._atomic import Destination, run_identity

    sc = qoslab.load(a.file, overrides=a.overrides)
    _warn(sc)
    problems = testbed.unsupported(sc)
    if problems:
        for pr in problems:
            _err(f"{a.file}: {pr}")
        _err(f"qoslab testbed: {len(problems)} feature(s) not supported on the testbed yet (docs/testbed.md)")
        return EXIT_INPUT
    out = Path(a.out) if a.out is not None else Path("results") / (_folder_name(sc.name) + "-testbed")
    seed = a.seed if a.seed is not None else sc.seed
    with Destination(out, option="--out", identity=run_identity(sc.echo, seed), overwrite=a.overwrite) as dest:
        try:
            res = testbed.run(sc, seed=seed, keep=a.keep)
        except testbed.TestbedError as e:
            _err(f"qoslab testbed: {e}")
            return EXIT_FAIL
        res.write_into(dest.tmp)
        dest.commit()
    res._path = out
    if not a.quiet:
        _stdout_console().print(_summary_table(res, out))
    return EXIT_OK


def cmd_compare(a: argparse.Namespace) -> int:
    from .compare import compare, renderables

    ra, rb = _load_result(a.a), _load_result(a.b)
    c = compare(ra, rb)
    if a.json:
        import json

        print(json.dumps(c, indent=2, allow_nan=False))
    else:
        console = _stdout_console()
        for r in renderables(c, a.a, a.b):
            console.print(r)
    return EXIT_FAIL if a.check and not c["within"] else EXIT_OK


def cmd_validate(a: argparse.Namespace) -> int:
    import json

    import qoslab

    sc = qoslab.load(a.file, overrides=a.overrides, max_memory=a.max_memory, max_events=a.max_events)
    _warn(sc)
    if a.echo:
        print(json.dumps(sc.echo, indent=2))
    else:
        n_groups = len(sc.echo.get("traffic", []))
        print(
            f"{a.file}: valid scenario {sc.name!r} ({sc.echo['topology'].get('preset', '?')} topology, "
            f"{n_groups} traffic group{'s' if n_groups != 1 else ''}, {sc.duration})"
        )
    return EXIT_OK


def cmd_schema(_: argparse.Namespace) -> int:
    import qoslab

    sys.stdout.write(qoslab.schema().rstrip("\n") + "\n")
    return EXIT_OK


def cmd_completion(a: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["qoslab"], shell=a.shell))
    return EXIT_OK


def cmd_version(_: argparse.Namespace) -> int:
    import qoslab

    print(f"qoslab {qoslab.__version__}")
    return EXIT_OK


def _claims_table(summary: Any) -> Any:
    """Paper beside qoslab, one block per claim: readable at any terminal width
    (a many-column table is unreadable at the 80 columns of a log file)."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    mode = "quick" if summary.quick else "full"
    seeds = ", ".join(map(str, summary.seeds))
    head = Text(f"{summary.name}: {summary.title} ({mode}, seeds {seeds})", style="bold underline")
    mark = {True: ("holds", "green"), False: ("FAILS", "red"), None: ("not checked", "yellow")}
    blocks: list[Any] = [head]

    def block(c: Any) -> None:
        word, colour = mark[c.holds]
        if c.kind == "check":
            word = f"check {word.lower()}"
        title = Text.assemble((f"[{word}] ", f"bold {colour}"), (c.id, "bold"), f"  {c.text}")
        rows = Table.grid(padding=(0, 1))
        rows.add_column(style="dim", no_wrap=True)
        rows.add_column()
        rows.add_row("paper", c.paper)
        rows.add_row("qoslab", c.measured)
        rows.add_row("holds if", c.tolerance)
        if c.holds is not True and c.explanation:
            rows.add_row("why", c.explanation)
        blocks.extend([title, Padding(rows, (0, 0, 0, 4))])

    for c in summary.outcome.claims:
        if c.kind == "claim":
            block(c)
    checks = [c for c in summary.outcome.claims if c.kind == "check"]
    if checks:  # listed apart, after the claims: they are never counted
        blocks.append(Text("checks (not counted as reproduced claims):", style="bold"))
        for c in checks:
            block(c)
    return Group(*blocks)


def cmd_reproduce(a: argparse.Namespace) -> int:
    from rich.console import Console

    from . import reproduce as rp
    from .errors import ReproductionError

    console = Console(highlight=False)
    log_console = _stderr_console()
    names = rp.names() if a.name == "all" else [a.name]
    for n in names:
        rp.paper(n)  # unknown names and malformed paper data fail before anything runs
    # --testbed runs the set-ups on real packets of the reproductions that have them (with 'all',
    # only those); a named one without them fails before anything runs.
    on_testbed = {n: a.testbed and getattr(rp.module(n), "TESTBED", False) for n in names}
    if a.testbed and a.name != "all" and not on_testbed[a.name]:
        with_testbed = [n for n in rp.names() if getattr(rp.module(n), "TESTBED", False)]
        raise ReproductionError(
            f"--testbed: {a.name} has no set-up on real packets yet; allowed: --testbed with {', '.join(with_testbed)}"
        )
    totals = {"holds": 0, "fails": 0, "not checked": 0}
    checks = dict.fromkeys(totals, 0)
    summaries: list[Any] = []
    from contextlib import ExitStack

    from .executor import open_executor
    from .scenario import default_limits

    with ExitStack() as held:
        held.enter_context(default_limits(max_memory=a.max_memory, max_events=a.max_events))
        # Every OUT/<name>/ is checked, locked and given its temporary folder before any run.
        dests = {
            n: held.enter_context(rp.destination(n, quick=a.quick, seeds=a.seeds, out=a.out, overwrite=a.overwrite))
            for n in names
        }
        ex = held.enter_context(open_executor(jobs=a.jobs, scheduler=a.scheduler))
        for n in names:
            s = rp.reproduce(
                n,
                quick=a.quick,
                seeds=a.seeds,
                out=a.out,
                log=lambda m: log_console.print(m),
                executor=ex,
                destination=dests[n],
                testbed=on_testbed[n],
                store=None if a.no_store else (a.store or str(Path(a.out) / ".store")),
            )
            console.print(_claims_table(s))
            k, ck = s.counts, s.check_counts
            for key in totals:
                totals[key] += k[key]
                checks[key] += ck[key]
            n_checks = sum(ck.values())
            console.print(
                f"{s.name}: {k['holds']} hold, {k['fails']} fail, {k['not checked']} not checked"
                + (f"; {n_checks} checks ({ck['fails']} fail)" if n_checks else "")
                + f" in {s.wall_s:.1f} s -> {s.folder / 'report.md'}",
                markup=False,
            )
            summaries.append(s)
    console.print(f"[bold]scores[/] (cells agreeing / cells compared, {'quick' if a.quick else 'full'} run):")
    for s in summaries:
        score = s.score
        if score is not None:
            line = score.line(s.name)
        elif hasattr(rp.module(s.name), "PAPER_DATA"):  # PAPER_DATA = None: it reproduces no paper's tables
            line = f"{s.name}: no paper's tables, no score"
        else:
            line = f"{s.name}: no paper data yet ({rp.paper_dir(s.folder.name)} is missing), no score"
        console.print("  " + line, markup=False, soft_wrap=True)
        if (tb := s.testbed_score) is not None:
            console.print("  " + tb.line(f"{s.name} on real packets"), markup=False, soft_wrap=True)
    overall = rp.overall_score(summaries)
    if overall is not None:
        papers = sum(1 for s in summaries if s.score is not None)
        console.print(
            "  " + overall.line(f"overall ({papers} paper{'s' if papers != 1 else ''})"), markup=False, soft_wrap=True
        )
    if a.name == "all":
        console.print(f"scores -> {rp.write_scores(a.out, summaries, quick=a.quick)}", markup=False)
    total = sum(totals.values())
    n_checks = sum(checks.values())
    console.print(
        f"[bold]overall[/]: {len(names)} reproduction{'s' if len(names) != 1 else ''}, "
        f"{totals['holds']} of {total} claims hold, {totals['fails']} fail, "
        f"{totals['not checked']} not checked"
        + (f"; {n_checks} checks apart ({checks['holds']} hold, {checks['fails']} fail)" if n_checks else "")
    )
    return EXIT_OK


def cmd_cac(a: argparse.Namespace) -> int:
    import dataclasses
    import json

    from .cac import answer_for_flags

    r = answer_for_flags(a)
    if a.json:
        print(json.dumps(dataclasses.asdict(r), indent=2))
        return EXIT_OK
    print(f"rho    = {r.rho:.4f}   (rho*C = {r.rho_c_bps / 1e6:.3f} Mb/s)")
    print(f"N_max  = {r.n_max}")
    if r.blocking is not None and r.offered_load_erl is not None:
        print(f"offered load A = {r.offered_load_erl:.4g} erl   Erlang-B blocking B({r.n_max}, A) = {r.blocking:.4g}")
    if r.target_arrival_rate_per_s is not None and r.target_offered_load_erl is not None:
        print(
            f"arrival rate for blocking {float(a.blocking):g}: {r.target_arrival_rate_per_s:.4g} /s   "
            f"(A = {r.target_offered_load_erl:.4g} erl)"
        )
    return EXIT_OK


#: Options whose value may look like an option (``--holding -1s``): joined as ``--holding=-1s``
#: so that the value reaches our own check, and its message, instead of argparse's.
_VALUE_FLAGS = frozenset({"--capacity", "--buffer", "--iplr", "--rate", "--holding", "--arrival-rate", "--blocking"})


def _join_dash_values(argv: list[str]) -> list[str]:
    if not argv or argv[0] != "cac":
        return argv
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok in _VALUE_FLAGS and nxt is not None and nxt.startswith("-") and not nxt.startswith("--"):
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's ``KeyboardInterrupt`` so that the same
    clean-up runs: the unfinished result's temporary folder is removed, the earlier one kept."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "cac": cmd_cac,
    "run": cmd_run,
    "sweep": cmd_sweep,
    "show": cmd_show,
    "plot": cmd_plot,
    "report": cmd_report,
    "validate": cmd_validate,
    "schema": cmd_schema,
    "reproduce": cmd_reproduce,
    "version": cmd_version,
    "completion": cmd_completion,
    "testbed": cmd_testbed,
    "compare": cmd_compare,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``qoslab`` and ``python -m qoslab``; returns the exit code."""
    import os
    import signal

    p = parser()
    if argv is None and "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (qoslab completion)
        import argcomplete

        argcomplete.autocomplete(p)
    args = p.parse_args(_join_dash_values(list(sys.argv[1:] if argv is None else argv)))
    import warnings

    from .errors import (
        ClusterError,
        ConfigError,
        ReproductionError,
        ScenarioFileError,
        ScenarioWarning,
        SimulationError,
    )

    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave SIGTERM as it is
        previous = None
    try:
        with warnings.catch_warnings():
            # The commands print a scenario's warnings themselves (_warn), once, on stderr.
            warnings.simplefilter("ignore", ScenarioWarning)
            return COMMANDS[args.command](args)
    except ConfigError as e:
        _err(str(e))
        return EXIT_INPUT
    except ScenarioFileError as e:
        where = e.filename if e.filename else "scenario"
        _err(f"{where}: cannot read: {e.strerror or e}")
        return EXIT_INPUT
    except ReproductionError as e:
        _err(f"qoslab: {e}")
        return EXIT_INPUT
    except SimulationError as e:
        _err(f"qoslab: simulation failed: {e}")
        return EXIT_FAIL
    except ClusterError as e:
        _err(f"qoslab: {e}")
        return EXIT_FAIL
    except Terminated:
        _err("qoslab: terminated (SIGTERM); the unfinished result was not written")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        _err("qoslab: interrupted; the unfinished result was not written")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (qoslab show ... | head): not a failure. Python would try to
        # flush stdout again at exit and fail; point it at /dev/null first.
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_OK
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
