"""The fixed cost of a run: the command line and ``qoslab.run(out=...)`` write their
result tables without importing pandas (pyarrow's array constructors would import it
only to check for pandas objects: 0.17 s of a 0.4 s fixed cost; docs/performance.md),
and the Parquet bytes are those pyarrow's own constructors give."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import qoslab
from conftest import RED_DUMBBELL
from qoslab import result as R


def test_a_run_written_from_the_command_line_never_imports_pandas(tmp_path):
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['qoslab', 'run', {str(RED_DUMBBELL)!r}, '--set', 'duration=1s', '--quiet', "
        f"'--out', {str(tmp_path / 'r')!r}]\n"
        "try:\n    runpy.run_module('qoslab', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e\n"
        "print('pandas' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
    assert (tmp_path / "r" / "flows.parquet").is_file()


def test_tables_built_from_buffers_write_the_same_parquet_bytes_as_pa_array():
    res = qoslab.run(RED_DUMBBELL, overrides=["duration=3s"])
    checked = 0
    for name, raw in res._raw.items():
        if not hasattr(raw, "items"):
            continue
        fields, arrays = [], []
        for col_name, col in raw.items():
            if isinstance(col, np.ndarray):
                typ = {"f": pa.float64(), "i": pa.int64(), "u": pa.uint64(), "b": pa.bool_()}[col.dtype.kind]
                arr = pa.array(col, type=typ)
            else:
                codes, values = col
                arr = pa.DictionaryArray.from_arrays(
                    pa.array(codes.astype(np.int32), type=pa.int32()), pa.array(values, type=pa.string())
                )
                typ = arr.type
            fields.append(pa.field(col_name, typ, nullable=False))
            arrays.append(arr)
        ref = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        a, b = io.BytesIO(), io.BytesIO()
        pq.write_table(ref, a, **R.PARQUET_OPTIONS)
        pq.write_table(R._arrow_table(raw), b, **R.PARQUET_OPTIONS)
        assert a.getvalue() == b.getvalue(), name
        checked += 1
    assert checked >= 4
