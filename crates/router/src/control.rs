//! The control socket: a Unix stream socket, mode 0600, for root only.
//!
//! One command per connection, one line, one JSON answer line:
//!
//! | command | answer |
//! |---|---|
//! | `stats` | the stats object (the same keys as a stats line) |
//! | `check PATH` | `{"ok":true}` if the configuration file at PATH is valid, else `{"ok":false,"errors":[...]}` |
//! | `reload PATH` | validates PATH fully, then swaps it in; refused whole (nothing changes) on any error |
//!
//! A client whose peer credentials (`SO_PEERCRED`) are not uid 0 gets
//! `{"ok":false,"error":"refused: ..."}` and nothing else; the socket's
//! mode 0600 (set before anyone can connect: the socket is bound under a
//! umask of 0177) already keeps other users from connecting.

use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest command line read.
const MAX_LINE: u64 = 4096;

#[derive(Debug)]
pub struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
}

/// The uid of the process at the other end of `s`.
pub fn peer_uid(s: &UnixStream) -> io::Result<u32> {
    // SAFETY: ucred is plain data; getsockopt writes at most `len` bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

impl ControlSocket {
    /// Binds `path` with mode 0600. An existing socket file there (a
    /// previous run's) is replaced; any other file is refused.
    pub fn bind(path: &Path) -> io::Result<ControlSocket> {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if !m.file_type().is_socket() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket; allowed: a free path", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        // SAFETY: umask(2) only swaps the process's file mode mask.
        let old = unsafe { libc::umask(0o177) };
        let l = UnixListener::bind(path);
        unsafe { libc::umask(old) };
        let listener = l?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        Ok(ControlSocket { listener, path: path.to_path_buf() })
    }

    pub fn fd(&self) -> i32 {
        self.listener.as_raw_fd()
    }

    /// Serves every connection waiting now: reads its command line and
    /// answers with `handle(command)`. Never blocks longer than a short
    /// read timeout per client.
    pub fn serve(&self, handle: &mut dyn FnMut(&str) -> String) {
        while let Ok((s, _)) = self.listener.accept() {
            let _ = serve_one(s, handle);
        }
    }
}

fn serve_one(s: UnixStream, handle: &mut dyn FnMut(&str) -> String) -> io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_millis(200)))?;
    s.set_write_timeout(Some(Duration::from_millis(200)))?;
    let mut w = s.try_clone()?;
    match peer_uid(&s) {
        Ok(0) => {}
        Ok(uid) => {
            let msg = serde_json::json!({"ok": false, "error":
                format!("refused: the control socket is root's only (peer uid {uid})")});
            return writeln!(w, "{msg}");
        }
        Err(e) => return writeln!(w, "{}", serde_json::json!({"ok": false, "error": format!("refused: {e}")})),
    }
    let mut line = String::new();
    let mut r = BufReader::new(io::Read::take(s, MAX_LINE));
    r.read_line(&mut line)?;
    let answer = handle(line.trim());
    writeln!(w, "{answer}")
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A client: sends `command` to the socket at `path`, returns the answer line.
pub fn request(path: &Path, command: &str) -> io::Result<String> {
    let mut s = UnixStream::connect(path)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    writeln!(s, "{command}")?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}
