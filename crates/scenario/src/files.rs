//! Files a scenario names: replay CSVs (`arrivals = { process = "replay",
//! file = ... }`) and MACE descriptor files. Validation reads them (so
//! `qoslab validate` finds what `qoslab run` would), and the simulator
//! reads replay rows through [`read_replay`], so both say the same thing.
//!
//! - [`text`]: a file's bytes as UTF-8 text, a leading byte-order mark
//!   dropped (spreadsheets write one); bytes that are not UTF-8 are a
//!   problem at the line of the first such byte, not an I/O error.
//! - [`parse_replay`]: the CSV `start_s,lifetime_s`, blank lines and `#`
//!   comments skipped, each bad row a `file:line` problem.

use crate::error::Diagnostic;
use qoslab_core::units::Dur;
use std::path::Path;

/// Why a named file gave no text: it could not be read at all (`Missing`,
/// reported at the scenario's field), or its bytes are not text (`NotText`,
/// reported at the file's own line).
#[derive(Debug)]
pub enum TextError {
    Missing(std::io::Error),
    NotText { line: usize, message: String },
}

/// The UTF-8 text of `path`, without a leading byte-order mark.
pub fn text(path: &Path) -> Result<String, TextError> {
    if path.is_dir() {
        return Err(TextError::Missing(std::io::Error::other("is a folder")));
    }
    let bytes = std::fs::read(path).map_err(TextError::Missing)?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(t.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(t)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(TextError::NotText {
                line,
                message: format!(
                    "is not text: byte 0x{:02X} (byte {} of the file) is not UTF-8",
                    bytes.get(at).copied().unwrap_or(0),
                    at + 1
                ),
            })
        }
    }
}

/// What a replay file holds, for messages.
pub const REPLAY_ALLOWED: &str = "a CSV file with the header \"start_s,lifetime_s\" and one row per flow";

/// Reads and parses a replay file; `field` is the scenario path of its
/// `file` setting. A file that cannot be read is a problem of the
/// scenario's field (at `origin:line`); a problem inside the file is at the
/// file's own line.
pub fn read_replay(path: &Path, origin: &str, line: Option<usize>, field: &str) -> Result<Vec<(Dur, Dur)>, Diagnostic> {
    let shown = path.display().to_string();
    let text = text(path).map_err(|e| match e {
        TextError::Missing(e) => Diagnostic {
            origin: origin.to_string(),
            line,
            path: field.to_string(),
            message: format!("cannot read replay file {shown}: {e}; allowed: {REPLAY_ALLOWED}"),
        },
        TextError::NotText { line, message } => Diagnostic {
            origin: shown.clone(),
            line: Some(line),
            path: field.to_string(),
            message: format!("{message}; allowed: {REPLAY_ALLOWED}"),
        },
    })?;
    parse_replay(&text, &shown, field)
}

/// Parses a replay CSV's text: `(start offset, lifetime)` per row, sorted
/// by start (stable). Problems are at `origin:line`, path `field`.
pub fn parse_replay(text: &str, origin: &str, field: &str) -> Result<Vec<(Dur, Dur)>, Diagnostic> {
    let err = |line: usize, message: String| Diagnostic {
        origin: origin.to_string(),
        line: Some(line),
        path: field.to_string(),
        message,
    };
    let mut rows = Vec::new();
    let mut header = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header {
            if cells != ["start_s", "lifetime_s"] {
                return Err(err(i + 1, format!("header {line:?}; allowed: the header \"start_s,lifetime_s\"")));
            }
            header = true;
            continue;
        }
        if cells.len() != 2 {
            return Err(err(
                i + 1,
                format!("{line:?} has {} fields; allowed: two numbers \"start_s,lifetime_s\"", cells.len()),
            ));
        }
        let num = |s: &str, what: &str, positive: bool| -> Result<Dur, Diagnostic> {
            let v: f64 = s
                .parse()
                .map_err(|_| err(i + 1, format!("{what} {s:?} is not a number; allowed: seconds such as 1.25")))?;
            let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 } && v < 1.8e10;
            if !ok {
                let allowed = if positive { "a number of seconds > 0" } else { "a number of seconds >= 0" };
                return Err(err(i + 1, format!("{what} {s} is out of range; allowed: {allowed}")));
            }
            Ok(Dur::from_secs_f64(v))
        };
        let start = num(cells[0], "start_s", false)?;
        let life = num(cells[1], "lifetime_s", true)?;
        rows.push((start, Dur(life.0.max(1))));
    }
    if !header {
        return Err(err(1, format!("the file is empty; allowed: {REPLAY_ALLOWED}")));
    }
    rows.sort_by_key(|r| r.0);
    Ok(rows)
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
