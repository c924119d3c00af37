//! Result tables to Python: each [`Table`] becomes a dict of columns in the
//! table's order. Numeric and boolean columns become NumPy arrays, built
//! with `numpy.frombuffer` over one little-endian copy of the data in a
//! bytearray, so the crate needs no NumPy headers and NumPy is imported
//! only when a run returns. String columns stay dictionary-encoded: a
//! tuple `(codes, values)` of an unsigned array (8, 16 or 32 bits, the
//! narrowest that holds the codes) and the list of distinct strings, which `qoslab.result` turns into an Arrow dictionary array
//! (long-form series repeat a few names millions of times).
//!
//! A table is converted column by column, each Rust column freed as soon
//! as its Python copy exists, so the two copies of a large table never
//! coexist whole.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyTuple};
use qoslab_sim::{output::Codes, Column, Strings, Table};

/// A NumPy array of `v`'s elements as `N`-byte little-endian values,
/// written straight into a Python bytearray (one copy).
fn array<'py, T, const N: usize>(
    np: &Bound<'py, PyModule>,
    v: &[T],
    dtype: &str,
    le: impl Fn(&T) -> [u8; N],
) -> PyResult<Bound<'py, PyAny>> {
    let buf = PyByteArray::new_with(np.py(), v.len() * N, |b| {
        for (chunk, x) in b.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&le(x));
        }
        Ok(())
    })?;
    np.call_method1("frombuffer", (buf, dtype))
}

/// A dictionary-encoded string column as `(codes, values: list[str])`, the
/// codes a `uint8`, `uint16` or `uint32` array (the narrowest that holds them).
fn strings<'py>(np: &Bound<'py, PyModule>, v: &Strings) -> PyResult<Bound<'py, PyAny>> {
    let codes = match v.codes() {
        Codes::U8(c) => array(np, c, "|u1", |x| [*x]),
        Codes::U16(c) => array(np, c, "<u2", |x| x.to_le_bytes()),
        Codes::U32(c) => array(np, c, "<u4", |x| x.to_le_bytes()),
    }?;
    let values = PyList::new(np.py(), v.values())?;
    Ok(PyTuple::new(np.py(), [codes, values.into_any()])?.into_any())
}

/// One column as a Python object (`numpy.ndarray` or a `(codes, values)` tuple).
pub fn column<'py>(np: &Bound<'py, PyModule>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    match c {
        Column::F64(v) => array(np, v, "<f8", |x| x.to_le_bytes()),
        Column::I64(v) => array(np, v, "<i8", |x| x.to_le_bytes()),
        Column::U64(v) => array(np, v, "<u8", |x| x.to_le_bytes()),
        Column::Bool(v) => array(np, v, "|b1", |x| [*x as u8]),
        Column::Str(v) => strings(np, v),
    }
}

/// A table as `{name: column}` in column order, consuming it column by
/// column (see the module doc).
pub fn table<'py>(np: &Bound<'py, PyModule>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(np.py());
    for (name, c) in t.columns {
        d.set_item(name, column(np, &c)?)?;
        drop(c);
    }
    Ok(d)
}
