//! What a run produces, in one schema for simulator and router: a JSON
//! summary and four column tables (flows, queues, series, events). The
//! Python front turns the tables into pandas DataFrames and Parquet files;
//! `docs/results.md` documents every column.

use indexmap::IndexSet;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(Strings),
}

/// A string column, dictionary-encoded as Arrow and Parquet store it: each
/// row is a code into `values`, the distinct strings in first-seen order.
/// Long-form tables repeat a few names millions of times (the series
/// table's `entity_kind`, `entity_id` and `metric`): 4 bytes a row instead
/// of a `String` each (docs/performance.md).
#[derive(Clone, Debug, Default)]
pub struct Strings {
    /// The distinct strings, each stored once; a string's code is its index.
    values: IndexSet<String>,
    codes: Codes,
}

/// A column's codes in the narrowest width its dictionary allows: one byte
/// while it holds at most 256 strings (the series' `entity_kind` and
/// `metric`), two up to 65,536, then four. A code that does not fit widens
/// the column once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Codes {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Default for Codes {
    fn default() -> Codes {
        Codes::U8(Vec::new())
    }
}

impl Codes {
    fn len(&self) -> usize {
        match self {
            Codes::U8(v) => v.len(),
            Codes::U16(v) => v.len(),
            Codes::U32(v) => v.len(),
        }
    }
    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Codes::U8(v) => v.get(i).map(|&c| c as u32),
            Codes::U16(v) => v.get(i).map(|&c| c as u32),
            Codes::U32(v) => v.get(i).copied(),
        }
    }
    fn reserve(&mut self, rows: usize) {
        match self {
            Codes::U8(v) => v.reserve(rows),
            Codes::U16(v) => v.reserve(rows),
            Codes::U32(v) => v.reserve(rows),
        }
    }
    #[inline]
    fn push(&mut self, c: u32) {
        match self {
            Codes::U8(v) if c <= u8::MAX as u32 => v.push(c as u8),
            Codes::U16(v) if c <= u16::MAX as u32 => v.push(c as u16),
            Codes::U32(v) => v.push(c),
            _ => {
                self.widen(c);
                self.push(c);
            }
        }
    }
    fn capacity(&self) -> usize {
        match self {
            Codes::U8(v) => v.capacity(),
            Codes::U16(v) => v.capacity(),
            Codes::U32(v) => v.capacity(),
        }
    }
    /// Re-stores the rows wide enough for code `c`, keeping the capacity.
    #[cold]
    fn widen(&mut self, c: u32) {
        let cap = self.capacity().max(self.len() + 1);
        let wide = if c <= u16::MAX as u32 {
            let mut v = Vec::with_capacity(cap);
            v.extend((0..self.len()).filter_map(|i| self.get(i)).map(|x| x as u16));
            Codes::U16(v)
        } else {
            let mut v = Vec::with_capacity(cap);
            v.extend((0..self.len()).filter_map(|i| self.get(i)));
            Codes::U32(v)
        };
        *self = wide;
    }
}

impl Strings {
    pub fn new() -> Strings {
        Strings::default()
    }
    /// The code of `s`, adding it to the dictionary if new.
    pub fn code(&mut self, s: &str) -> u32 {
        let i = match self.values.get_index_of(s) {
            Some(i) => i,
            None => self.values.insert_full(s.to_string()).0,
        };
        u32::try_from(i).expect("fewer than 2^32 distinct strings")
    }
    /// Adds a string known to be new (the rows of a unique column), without
    /// looking it up first; returns its code.
    fn code_new(&mut self, s: String) -> u32 {
        let (i, _) = self.values.insert_full(s);
        u32::try_from(i).expect("fewer than 2^32 distinct strings")
    }
    /// Room for `rows` more rows.
    pub fn reserve(&mut self, rows: usize) {
        self.codes.reserve(rows);
    }
    /// Appends a row.
    pub fn push(&mut self, s: &str) {
        let c = self.code(s);
        self.codes.push(c);
    }
    /// Appends a row by a code from [`Strings::code`].
    pub fn push_code(&mut self, c: u32) {
        debug_assert!((c as usize) < self.distinct());
        self.codes.push(c);
    }
    pub fn len(&self) -> usize {
        self.codes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.codes.len() == 0
    }
    /// Row `i`'s string.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.codes.get(i).map(|c| self.value(c))
    }
    /// The string of code `c`.
    pub fn value(&self, c: u32) -> &str {
        &self.values[c as usize]
    }
    /// The rows' strings, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.codes.len()).filter_map(|i| self.codes.get(i)).map(|c| self.value(c))
    }
    /// The rows' codes into [`Strings::values`], in the narrowest width.
    pub fn codes(&self) -> &Codes {
        &self.codes
    }
    /// The distinct strings, in first-seen order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.values.iter().map(String::as_str)
    }
    /// The number of distinct strings.
    pub fn distinct(&self) -> usize {
        self.values.len()
    }
    /// The rows as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

/// Two columns are equal when their rows are (the dictionary order follows
/// from the rows).
impl PartialEq for Strings {
    fn eq(&self, other: &Strings) -> bool {
        self.codes == other.codes && self.values.iter().eq(other.values.iter())
    }
}

impl<S: AsRef<str>> FromIterator<S> for Strings {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Strings {
        let mut s = Strings::new();
        for x in iter {
            s.push(x.as_ref());
        }
        s
    }
}

impl Strings {
    /// A column of owned strings, taking each without a copy when it is new.
    pub fn from_owned(rows: impl IntoIterator<Item = String>) -> Strings {
        let mut s = Strings::new();
        for x in rows {
            let c = match s.values.get_index_of(x.as_str()) {
                Some(i) => i as u32,
                None => s.code_new(x),
            };
            s.codes.push(c);
        }
        s
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new() -> Table {
        Table::default()
    }
    pub fn push(&mut self, name: &str, col: Column) {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()), "column {name} length");
        self.columns.push((name.to_string(), col));
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}

/// Everything one run writes.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// `summary.json`: scenario echo, seed, versions, timings, totals.
    pub summary: serde_json::Value,
    pub flows: Table,
    pub queues: Table,
    pub series: Table,
    pub events: Table,
    /// Packet traces (`[trace] pcap`), written as pcapng on demand.
    pub traces: Vec<crate::trace::PcapTrace>,
}
