//! Reading a configuration file with a bound: only a regular file, opened
//! without blocking (a FIFO's `open` would wait for a writer), checked
//! again on the open descriptor, and read up to [`MAX_FILE`] bytes (the
//! read itself stops there: `/proc` files report size 0). `check` and
//! `reload` on the control socket, SIGHUP and `qoslab-router run|check` all
//! read through here, so `check /dev/zero` or a named pipe is refused at
//! once, naming the file.
//!
//! The scenario crate's `bounded::read_text` (issue 27) has the same rules
//! and limit; when it lands, [`read_text`] becomes a call to it.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most bytes of a configuration file read (16 MiB).
pub const MAX_FILE: u64 = 16 << 20;

fn kind(ft: &std::fs::FileType) -> &'static str {
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

/// The text of the regular file at `path`, at most `limit` bytes; the
/// error says why not (`is a pipe, not a regular file; allowed: ...`).
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let regular = |m: &std::fs::Metadata| {
        if m.file_type().is_file() {
            Ok(())
        } else {
            Err(format!("is {}, not a regular file; allowed: a regular file", kind(&m.file_type())))
        }
    };
    regular(&std::fs::metadata(path).map_err(|e| e.to_string())?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| e.to_string())?;
    regular(&file.metadata().map_err(|e| e.to_string())?)?;
    let mut bytes = Vec::new();
    File::take(file, limit + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("is larger than {limit} bytes; allowed: a file of at most {limit} bytes"));
    }
    String::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_text_refuses_devices_pipes_folders_and_large_files() {
        let e = read_text(Path::new("/dev/zero"), MAX_FILE).unwrap_err();
        assert!(e.contains("is a device, not a regular file"), "{e}");
        assert!(read_text(Path::new("/"), MAX_FILE).unwrap_err().contains("a folder"));
        let dir = std::env::temp_dir().join(format!("qoslab-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Refused at once: no writer is waited for.
        assert!(read_text(&fifo, MAX_FILE).unwrap_err().contains("is a pipe"));
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; 101]).unwrap();
        assert!(read_text(&big, 100).unwrap_err().contains("larger than 100 bytes"));
        assert_eq!(read_text(&big, 101).unwrap().len(), 101);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
