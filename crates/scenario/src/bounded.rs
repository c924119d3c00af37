//! Reading input files with a bound: every file qoslab reads from outside
//! (scenario, sweep and descriptor files, replay and frame traces, the
//! router's configuration and control files) goes through here, so that a
//! path given by mistake (`/dev/zero`, a pipe, a 20 GB log) is refused with
//! one clear message instead of filling memory.
//!
//! - Only **regular files** are read. A folder, a device, a FIFO or a
//!   socket is refused before any byte is read; the file is opened
//!   non-blocking (a FIFO's `open` would otherwise wait for a writer) and
//!   checked again on the open descriptor (`fstat`), so a path swapped
//!   between the two checks is refused too.
//! - **Whole files** ([`read`], [`read_text`]) are read up to a limit
//!   ([`MAX_FILE`] = 16 MiB for scenario, sweep, descriptor and
//!   configuration files); one byte more is an error naming the file and
//!   the limit. The size is not trusted from `stat` (files in `/proc` say
//!   0): the read itself stops at the limit.
//! - **Data files** ([`for_each_line`]: replay CSVs, frame traces) are
//!   streamed one line at a time, each line at most [`MAX_LINE`] bytes and
//!   the file at most a given number of lines, so memory holds one line,
//!   not the file.
//! - Text is UTF-8 with a leading byte-order mark dropped; bytes that are
//!   not UTF-8 are an error at the line of the first such byte.
//!
//! Text fields of a scenario (names, descriptions, paths) are bounded by
//! [`MAX_TEXT`] (4 KiB) in the structural check ([`crate::shape`]).
//!
//! The router reads its configuration file with [`read_text`], `qoslab-traffic`
//! its spec with [`read_text`] and its replay files with [`for_each_line`];
//! Python reads through `qoslab._core.read_text`, this same function.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The most bytes of a whole file read at once: scenario, sweep, MACE
/// descriptor and router configuration files (16 MiB).
pub const MAX_FILE: u64 = 16 << 20;
/// The longest text field of a scenario (a name, a description, a path): 4 KiB.
pub const MAX_TEXT: usize = 4 << 10;
/// The longest line of a streamed data file (a replay or trace row): 4 KiB.
pub const MAX_LINE: usize = 4 << 10;

/// Why a file gave no text.
#[derive(Debug)]
pub enum ReadError {
    /// It could not be opened or read (missing, no permission, ...).
    Io(std::io::Error),
    /// It is not a regular file: what it is ("a folder", "a device", ...).
    NotRegular(&'static str),
    /// It holds more than `limit` bytes.
    TooLarge { limit: u64 },
    /// Line `line` is longer than `limit` bytes.
    LineTooLong { line: usize, limit: usize },
    /// It has more than `limit` lines.
    TooManyLines { limit: usize },
    /// A byte that is not UTF-8, at 1-based `line`; `message` says which.
    NotText { line: usize, message: String },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular(what) => write!(f, "is {what}, not a regular file; allowed: a regular file"),
            ReadError::TooLarge { limit } => {
                write!(f, "is larger than {}; allowed: a file of at most {}", size(*limit), size(*limit))
            }
            ReadError::LineTooLong { line, limit } => {
                write!(f, "line {line} is longer than {limit} bytes; allowed: lines of at most {limit} bytes")
            }
            ReadError::TooManyLines { limit } => write!(f, "has more than {limit} lines; allowed: at most {limit}"),
            ReadError::NotText { message, .. } => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// `16 MiB`, `4 KiB`, `100 B`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

fn kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a folder"
    } else if ft.is_fifo() {
        "a pipe"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading if it is a regular file (see the module doc).
pub fn open(path: &Path) -> Result<File, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular(kind(&meta.file_type())));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular(kind(&meta.file_type())));
    }
    Ok(file)
}

/// The bytes of the regular file `path`, at most `limit` of them.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// UTF-8 `bytes` as text (a leading byte-order mark dropped when they start
/// the file, `first_line` 1); a byte that is not UTF-8 is
/// [`ReadError::NotText`] at its line (lines counted from `first_line`;
/// `byte_offset`: where `bytes` start in the file).
fn to_text(bytes: Vec<u8>, first_line: usize, byte_offset: u64) -> Result<String, ReadError> {
    match String::from_utf8(bytes) {
        Ok(t) if first_line == 1 => Ok(t.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(t)),
        Ok(t) => Ok(t),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = first_line + bytes[..at].iter().filter(|&&b| b == b'\n').count();
            Err(ReadError::NotText {
                line,
                message: format!(
                    "is not text: byte 0x{:02X} (byte {} of the file) is not UTF-8",
                    bytes.get(at).copied().unwrap_or(0),
                    byte_offset + at as u64 + 1
                ),
            })
        }
    }
}

/// The UTF-8 text of the regular file `path` (at most `limit` bytes), a
/// leading byte-order mark dropped.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    to_text(read(path, limit)?, 1, 0)
}

/// Calls `f(line_number, line)` for each line of the regular file `path`
/// (1-based numbers; the line without its `\n` or `\r\n`), streaming: each
/// line at most `max_line` bytes, at most `max_lines` lines. Stops at the
/// first error of `f`, returned as `Ok(Err(e))`; a reading problem is the
/// outer error.
pub fn for_each_line<E>(
    path: &Path,
    max_line: usize,
    max_lines: usize,
    mut f: impl FnMut(usize, &str) -> Result<(), E>,
) -> Result<Result<(), E>, ReadError> {
    let mut reader = BufReader::with_capacity(64 << 10, open(path)?);
    let mut buf = Vec::with_capacity(256);
    let mut offset = 0u64;
    let mut n = 0usize;
    loop {
        buf.clear();
        // One byte more than a line may hold (plus its "\r\n"): a longer line is refused.
        let got = (&mut reader).take(max_line as u64 + 3).read_until(b'\n', &mut buf).map_err(ReadError::Io)?;
        if got == 0 {
            return Ok(Ok(()));
        }
        n += 1;
        if n > max_lines {
            return Err(ReadError::TooManyLines { limit: max_lines });
        }
        let mut body = buf.as_slice();
        if let Some(b) = body.strip_suffix(b"\n") {
            body = b.strip_suffix(b"\r").unwrap_or(b);
        }
        if body.len() > max_line {
            return Err(ReadError::LineTooLong { line: n, limit: max_line });
        }
        let text = to_text(body.to_vec(), n, offset)?;
        offset += got as u64;
        if let Err(e) = f(n, &text) {
            return Ok(Err(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "qoslab-bounded-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn devices_folders_and_pipes_are_refused_before_reading() {
        let e = read(Path::new("/dev/zero"), MAX_FILE).unwrap_err();
        assert_eq!(e.to_string(), "is a device, not a regular file; allowed: a regular file");
        let d = dir();
        assert!(read(&d, MAX_FILE).unwrap_err().to_string().starts_with("is a folder"));
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would hang here.
        assert!(read(&fifo, MAX_FILE).unwrap_err().to_string().starts_with("is a pipe"));
        assert!(matches!(read(&d.join("none"), MAX_FILE), Err(ReadError::Io(_))));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_above_the_limit_is_refused_naming_the_limit() {
        let d = dir().join("big");
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("f.toml");
        std::fs::write(&f, vec![b'a'; 2049]).unwrap();
        assert_eq!(read(&f, 2049).unwrap().len(), 2049);
        let e = read(&f, 2048).unwrap_err();
        assert_eq!(e.to_string(), "is larger than 2 KiB; allowed: a file of at most 2 KiB");
        assert_eq!(size(MAX_FILE), "16 MiB");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn lines_are_streamed_with_their_numbers_and_bounded() {
        let d = dir().join("lines");
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("a.csv");
        std::fs::write(&f, "\u{feff}a,b\r\n\n1,2\nlast").unwrap();
        let mut seen = Vec::new();
        for_each_line(&f, 16, 10, |n, l| {
            seen.push((n, l.to_string()));
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(seen, [(1, "a,b".to_string()), (2, String::new()), (3, "1,2".to_string()), (4, "last".to_string())]);
        let e = for_each_line(&f, 2, 10, |_, _| Ok::<(), ()>(())).unwrap_err();
        assert_eq!(e.to_string(), "line 1 is longer than 2 bytes; allowed: lines of at most 2 bytes");
        let e = for_each_line(&f, 16, 3, |_, _| Ok::<(), ()>(())).unwrap_err();
        assert_eq!(e.to_string(), "has more than 3 lines; allowed: at most 3");
        std::fs::write(&f, b"ok\n\xff\n").unwrap();
        match for_each_line(&f, 16, 10, |_, _| Ok::<(), ()>(())).unwrap_err() {
            ReadError::NotText { line, message } => {
                assert_eq!(line, 2);
                assert!(message.contains("byte 4 of the file"), "{message}");
            }
            other => panic!("{other}"),
        }
        // The callback's own error stops the walk.
        std::fs::write(&f, "1\n2\n3\n").unwrap();
        let r = for_each_line(&f, 16, 10, |n, _| if n == 2 { Err(n) } else { Ok(()) }).unwrap();
        assert_eq!(r, Err(2));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
