//! Result tables to Python: each [`Table`] becomes a dict of columns in the
//! table's order. Numeric and boolean columns become NumPy arrays, built
//! with `numpy.frombuffer` over one little-endian copy of the data in a
//! bytearray, so the crate needs no NumPy headers and NumPy is imported
//! only when a run returns. String columns become lists of `str` in which
//! equal strings share one object (long-form series repeat a few names
//! millions of times).

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyString};
use qoslab_sim::{Column, Table};
use std::collections::HashMap;

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

fn strings<'py>(py: Python<'py>, v: &[String]) -> PyResult<Bound<'py, PyList>> {
    let mut seen: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    let items = v.iter().map(|s| seen.entry(s.as_str()).or_insert_with(|| PyString::new(py, s)).clone());
    PyList::new(py, items.collect::<Vec<_>>())
}

/// One column as a Python object (`numpy.ndarray` or `list[str]`).
pub fn column<'py>(np: &Bound<'py, PyModule>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    match c {
        Column::F64(v) => array(np, v, "<f8", |x| x.to_le_bytes()),
        Column::I64(v) => array(np, v, "<i8", |x| x.to_le_bytes()),
        Column::U64(v) => array(np, v, "<u8", |x| x.to_le_bytes()),
        Column::Bool(v) => array(np, v, "|b1", |x| [*x as u8]),
        Column::Str(v) => Ok(strings(np.py(), v)?.into_any()),
    }
}

/// A table as `{name: column}` in column order.
pub fn table<'py>(np: &Bound<'py, PyModule>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(np.py());
    for (name, c) in &t.columns {
        d.set_item(name, column(np, c)?)?;
    }
    Ok(d)
}
