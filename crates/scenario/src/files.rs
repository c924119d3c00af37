//! Files a scenario names: replay CSVs (`arrivals = { process = "replay",
//! file = ... }`), frame traces ([`crate::vtr`]) and MACE descriptor files.
//! Validation reads them (so `qoslab validate` finds what `qoslab run`
//! would), and the simulator reads replay rows through [`replay_rows`], so
//! both say the same thing. Every read is bounded ([`crate::bounded`]):
//! only regular files; whole files at most [`bounded::MAX_FILE`]; data
//! files streamed a line at a time.
//!
//! - [`text`]: a file's bytes as UTF-8 text, a leading byte-order mark
//!   dropped (spreadsheets write one); bytes that are not UTF-8 are a
//!   problem at the line of the first such byte, not an I/O error.
//! - [`parse_replay`], [`replay_rows`]: the CSV `start_s,lifetime_s`, blank
//!   lines and `#` comments skipped, each bad row a `file:line` problem.

use crate::bounded::{self, ReadError};
use crate::error::Diagnostic;
use qoslab_core::units::Dur;
use std::path::Path;

/// Why a named file gave no text: it could not be read at all (`Missing`:
/// absent, not a regular file, too large; reported at the scenario's
/// field), or its bytes are not text (`NotText`, reported at the file's own
/// line).
#[derive(Debug)]
pub enum TextError {
    Missing(ReadError),
    NotText { line: usize, message: String },
}

impl From<ReadError> for TextError {
    fn from(e: ReadError) -> TextError {
        match e {
            ReadError::NotText { line, message } => TextError::NotText { line, message },
            other => TextError::Missing(other),
        }
    }
}

/// The UTF-8 text of `path` (a regular file of at most [`bounded::MAX_FILE`]
/// bytes), without a leading byte-order mark.
pub fn text(path: &Path) -> Result<String, TextError> {
    bounded::read_text(path, bounded::MAX_FILE).map_err(TextError::from)
}

/// Why a data file (replay, frame trace) gave no rows: it could not be read
/// (`Unreadable`, a problem of the scenario's field), or a row is bad (`Bad`,
/// at the file's own line).
#[derive(Debug)]
pub enum DataError {
    Unreadable(ReadError),
    Bad(Diagnostic),
}

/// Streams the lines of a data file into `line` (see
/// [`bounded::for_each_line`]); a line that is not UTF-8 is a `Bad` problem
/// at its line, with `allowed` appended.
pub(crate) fn stream(
    path: &Path,
    max_lines: usize,
    field: &str,
    allowed: &str,
    line: impl FnMut(usize, &str) -> Result<(), Diagnostic>,
) -> Result<(), DataError> {
    match bounded::for_each_line(path, bounded::MAX_LINE, max_lines, line) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(d)) => Err(DataError::Bad(d)),
        Err(ReadError::NotText { line, message }) => Err(DataError::Bad(Diagnostic {
            origin: path.display().to_string(),
            line: Some(line),
            path: field.to_string(),
            message: format!("{message}; allowed: {allowed}"),
        })),
        Err(ReadError::LineTooLong { line, limit }) => Err(DataError::Bad(Diagnostic {
            origin: path.display().to_string(),
            line: Some(line),
            path: field.to_string(),
            message: format!("the line is longer than {limit} bytes; allowed: {allowed}"),
        })),
        Err(e) => Err(DataError::Unreadable(e)),
    }
}

/// What a replay file holds, for messages.
pub const REPLAY_ALLOWED: &str = "a CSV file with the header \"start_s,lifetime_s\" and one row per flow";
/// The most lines a replay file may have (each row a flow).
pub const MAX_REPLAY_LINES: usize = 10_000_000;

/// Reads and parses a replay file; `field` is the scenario path of its
/// `file` setting. A file that cannot be read is a problem of the
/// scenario's field (at `origin:line`); a problem inside the file is at the
/// file's own line.
pub fn read_replay(path: &Path, origin: &str, line: Option<usize>, field: &str) -> Result<Vec<(Dur, Dur)>, Diagnostic> {
    replay_rows(path, field).map_err(|e| match e {
        DataError::Unreadable(e) => Diagnostic {
            origin: origin.to_string(),
            line,
            path: field.to_string(),
            message: format!("cannot read replay file {}: {e}; allowed: {REPLAY_ALLOWED}", path.display()),
        },
        DataError::Bad(d) => d,
    })
}

/// The rows of a replay file, streamed (see [`read_replay`]).
pub fn replay_rows(path: &Path, field: &str) -> Result<Vec<(Dur, Dur)>, DataError> {
    let shown = path.display().to_string();
    let mut p = ReplayParser::new(&shown, field);
    stream(path, MAX_REPLAY_LINES, field, REPLAY_ALLOWED, |n, l| p.line(n, l))?;
    p.finish().map_err(DataError::Bad)
}

/// Parses a replay CSV's text: `(start offset, lifetime)` per row, sorted
/// by start (stable). Problems are at `origin:line`, path `field`.
pub fn parse_replay(text: &str, origin: &str, field: &str) -> Result<Vec<(Dur, Dur)>, Diagnostic> {
    let mut p = ReplayParser::new(origin, field);
    for (i, raw) in text.lines().enumerate() {
        p.line(i + 1, raw)?;
    }
    p.finish()
}

/// A replay file read a line at a time.
struct ReplayParser<'a> {
    origin: &'a str,
    field: &'a str,
    header: bool,
    rows: Vec<(Dur, Dur)>,
}

impl<'a> ReplayParser<'a> {
    fn new(origin: &'a str, field: &'a str) -> Self {
        ReplayParser { origin, field, header: false, rows: Vec::new() }
    }

    fn err(&self, line: usize, message: String) -> Diagnostic {
        Diagnostic { origin: self.origin.to_string(), line: Some(line), path: self.field.to_string(), message }
    }

    fn line(&mut self, n: usize, raw: &str) -> Result<(), Diagnostic> {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !self.header {
            if cells != ["start_s", "lifetime_s"] {
                return Err(self.err(n, format!("header {line:?}; allowed: the header \"start_s,lifetime_s\"")));
            }
            self.header = true;
            return Ok(());
        }
        if cells.len() != 2 {
            return Err(self
                .err(n, format!("{line:?} has {} fields; allowed: two numbers \"start_s,lifetime_s\"", cells.len())));
        }
        let num = |s: &str, what: &str, positive: bool| -> Result<Dur, Diagnostic> {
            let v: f64 = s
                .parse()
                .map_err(|_| self.err(n, format!("{what} {s:?} is not a number; allowed: seconds such as 1.25")))?;
            let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 } && v < 1.8e10;
            if !ok {
                let allowed = if positive { "a number of seconds > 0" } else { "a number of seconds >= 0" };
                return Err(self.err(n, format!("{what} {s} is out of range; allowed: {allowed}")));
            }
            Ok(Dur::from_secs_f64(v))
        };
        let start = num(cells[0], "start_s", false)?;
        let life = num(cells[1], "lifetime_s", true)?;
        self.rows.push((start, Dur(life.0.max(1))));
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<(Dur, Dur)>, Diagnostic> {
        if !self.header {
            return Err(self.err(1, format!("the file is empty; allowed: {REPLAY_ALLOWED}")));
        }
        self.rows.sort_by_key(|r| r.0);
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_reads_rows_sorted_and_names_bad_lines() {
        let rows =
            parse_replay("# rec\nstart_s,lifetime_s\n2.5, 1\n0,0.5\n\n", "f.csv", "traffic.0.arrivals.file").unwrap();
        assert_eq!(rows, vec![(Dur::ZERO, Dur::from_ms(500)), (Dur::from_ms(2500), Dur::from_secs(1))]);
        let e = parse_replay("start_s,lifetime_s\n1,2\n3,x\n", "f.csv", "traffic.0.arrivals.file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.csv:3: traffic.0.arrivals.file: lifetime_s \"x\" is not a number; allowed: seconds such as 1.25"
        );
        let e = parse_replay("start,life\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().starts_with("f.csv:1: p: header"), "{e}");
        let e = parse_replay("start_s,lifetime_s\n-1,2\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().contains("allowed: a number of seconds >= 0"), "{e}");
        let e = parse_replay("start_s,lifetime_s\n1,0\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().contains("> 0"), "{e}");
        let e = parse_replay("start_s,lifetime_s\nnan,1\n", "f.csv", "p").unwrap_err();
        assert!(e.to_string().starts_with("f.csv:2: p: start_s nan is out of range"), "{e}");
        assert!(parse_replay("", "f.csv", "p").is_err());
    }

    #[test]
    fn files_that_are_not_text_name_the_line_of_the_first_bad_byte() {
        let dir = std::env::temp_dir().join(format!("qoslab-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("bin.csv");
        std::fs::write(&bin, b"start_s,lifetime_s\n1,2\n\xff\xfe\x00\x01").unwrap();
        let bom = dir.join("bom.csv");
        std::fs::write(&bom, "\u{feff}start_s,lifetime_s\n1,2\n").unwrap();
        let e = read_replay(&bin, "s.toml", Some(7), "f").unwrap_err();
        let rows = read_replay(&bom, "s.toml", Some(7), "f");
        let missing = read_replay(&dir.join("none.csv"), "s.toml", Some(7), "f").unwrap_err();
        let folder = read_replay(&dir, "s.toml", Some(7), "f").unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((e.origin.as_str(), e.line), (bin.display().to_string().as_str(), Some(3)));
        assert!(e.message.starts_with("is not text: byte 0xFF (byte 24 of the file) is not UTF-8"), "{e}");
        assert_eq!(rows.unwrap(), vec![(Dur::from_secs(1), Dur::from_secs(2))], "a byte-order mark is dropped");
        assert_eq!((missing.origin.as_str(), missing.line), ("s.toml", Some(7)));
        assert!(missing.message.starts_with("cannot read replay file"), "{missing}");
        assert!(folder.message.contains("is a folder"), "{folder}");
    }
}
