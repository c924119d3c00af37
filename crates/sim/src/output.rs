//! What a run produces, in one schema for simulator and router: a JSON
//! summary and four column tables (flows, queues, series, events). The
//! Python front turns the tables into pandas DataFrames and Parquet files;
//! `docs/results.md` documents every column.

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
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
    /// Packet traces (`[trace] pcap`): the direction's name and its pcapng bytes.
    pub traces: Vec<(String, Vec<u8>)>,
}
