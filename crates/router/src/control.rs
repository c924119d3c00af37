//! The control socket and the control thread: a Unix stream socket, mode
//! 0600, for root only, served off the forwarding path.
//!
//! One command per connection, one line, one JSON answer line:
//!
//! | command | answer |
//! |---|---|
//! | `stats` | the stats object (the same keys as a stats line) |
//! | `check PATH` | `{"ok":true}` if the configuration file at PATH is valid, else `{"ok":false,"errors":[...]}` |
//! | `reload PATH` | validates PATH fully, then swaps it in; refused whole (nothing changes) on any error |
//!
//! ```text
//! control thread:  accept → peer uid 0? → read one line (≤ 4 KiB, ≤ 1 s) →
//!                  check/reload: read the file (a regular file, ≤ 16 MiB), validate it, build its ports
//!                  stats/reload: a Call to the forwarding thread (a channel + an eventfd that wakes its ppoll)
//!                  → answer (≤ 1 s to write)
//!                  SIGHUP (a byte on a self-pipe): reload the run's own configuration file
//! forwarding thread: between two passes of its loop, answers the Calls waiting (a stats object;
//!                  a reload checked against the live state and swapped in)
//! ```
//!
//! So the forwarding thread never reads a file or waits for a client: a
//! client that connects and says nothing costs the control thread its
//! deadline, not the link. A client whose peer credentials (`SO_PEERCRED`)
//! are not uid 0 gets `{"ok":false,"error":"refused: ..."}` and nothing
//! else; the socket's mode 0600 (set before anyone can connect: it is
//! bound under a umask of 0177) already keeps other users out.
//!
//! A path where a live router (anything that accepts a connection)
//! listens is refused; a stale socket file (nothing listening) is replaced.
//! At exit the router removes the socket file only if it is still the one
//! it bound (same device and inode).

use crate::config::ValidConfig;
use qoslab_core::pipeline::Port;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest command line read.
const MAX_LINE: usize = 4096;
/// The most time a client gets to send its line, and to take the answer.
pub const CLIENT_DEADLINE: Duration = Duration::from_secs(1);
/// The most time the control thread waits for the forwarding thread's answer.
const ANSWER_DEADLINE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
    /// Device and inode of the socket file this router bound.
    id: (u64, u64),
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
    /// Binds `path` with mode 0600. A socket file there that nothing
    /// listens on (a previous run's) is replaced; a live one, or any other
    /// file, is refused.
    pub fn bind(path: &Path) -> io::Result<ControlSocket> {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if !m.file_type().is_socket() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket; allowed: a free path", path.display()),
                ));
            }
            match UnixStream::connect(path) {
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrInUse,
                        format!(
                            "{} is in use: a running qoslab-router (or another program) listens on it; allowed: \
                             a free path or a stale socket",
                            path.display()
                        ),
                    ))
                }
                Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => std::fs::remove_file(path)?,
                Err(e) => return Err(e),
            }
        }
        // SAFETY: umask(2) only swaps the process's file mode mask.
        let old = unsafe { libc::umask(0o177) };
        let l = UnixListener::bind(path);
        unsafe { libc::umask(old) };
        let listener = l?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let m = std::fs::symlink_metadata(path)?;
        Ok(ControlSocket { listener, path: path.to_path_buf(), id: (m.dev(), m.ino()) })
    }

    pub fn fd(&self) -> i32 {
        self.listener.as_raw_fd()
    }

    /// Serves the connections waiting now, one at a time: reads its command
    /// line and answers with `handle(command)`, each within [`CLIENT_DEADLINE`].
    pub fn serve(&self, handle: &mut dyn FnMut(&str) -> String) {
        while let Ok((s, _)) = self.listener.accept() {
            let _ = serve_one(s, handle);
        }
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes from `s` before `deadline`.
fn read_line(s: &mut UnixStream, deadline: Instant) -> io::Result<String> {
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    while !line.contains(&b'\n') && line.len() <= MAX_LINE {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no command line within 1 s"));
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf)? {
            0 => break,
            n => line.extend_from_slice(&buf[..n]),
        }
    }
    if let Some(end) = line.iter().position(|b| *b == b'\n') {
        line.truncate(end);
    }
    if line.len() > MAX_LINE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "command line longer than 4096 bytes"));
    }
    String::from_utf8(line).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "command line is not UTF-8"))
}

fn serve_one(mut s: UnixStream, handle: &mut dyn FnMut(&str) -> String) -> io::Result<()> {
    let deadline = Instant::now() + CLIENT_DEADLINE;
    s.set_nonblocking(false)?;
    s.set_write_timeout(Some(CLIENT_DEADLINE))?;
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
    let answer = match read_line(&mut s, deadline) {
        Ok(line) => handle(line.trim()),
        Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}).to_string(),
    };
    writeln!(w, "{answer}")
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        // Only our own socket file: a later router may have replaced a stale one of ours.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A client: sends `command` to the socket at `path`, returns the answer line.
pub fn request(path: &Path, command: &str) -> io::Result<String> {
    let mut s = UnixStream::connect(path)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    writeln!(s, "{command}")?;
    let mut line = String::new();
    io::BufRead::read_line(&mut io::BufReader::new(s).take(1 << 24), &mut line)?;
    Ok(line.trim_end().to_string())
}

/// What the control thread asks of the forwarding thread.
#[derive(Debug)]
pub enum Request {
    /// The stats object, as a JSON line.
    Stats,
    /// Check `config` against the live state and swap it in, with its
    /// ports built by the control thread.
    Reload(Box<ValidConfig>, Box<[Port; 2]>),
}

/// One request and where its answer (a JSON line) goes.
#[derive(Debug)]
pub struct Call {
    pub request: Request,
    pub answer: mpsc::SyncSender<String>,
}

/// The forwarding thread's end: the calls, and the eventfd that wakes its `ppoll`.
#[derive(Debug)]
pub struct Mailbox {
    calls: mpsc::Receiver<Call>,
    wake: OwnedFd,
}

/// The control thread's end.
#[derive(Debug)]
pub struct Caller {
    calls: mpsc::Sender<Call>,
    wake: OwnedFd,
}

/// A mailbox and the caller that posts to it.
pub fn mailbox() -> io::Result<(Mailbox, Caller)> {
    // SAFETY: eventfd(2) returns a new descriptor we own.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is fresh and owned here.
    let wake = unsafe { OwnedFd::from_raw_fd(fd) };
    let caller_wake = wake.try_clone()?;
    let (tx, rx) = mpsc::channel();
    Ok((Mailbox { calls: rx, wake }, Caller { calls: tx, wake: caller_wake }))
}

impl Mailbox {
    /// The descriptor to wait on (readable when a call is posted).
    pub fn fd(&self) -> RawFd {
        self.wake.as_raw_fd()
    }
    /// Resets the eventfd (after `ppoll` found it readable).
    pub fn clear(&self) {
        let mut v = 0u64;
        // SAFETY: reads the 8-byte eventfd counter into `v`.
        unsafe { libc::read(self.fd(), &mut v as *mut u64 as *mut libc::c_void, 8) };
    }
    /// The next call waiting, if any (no system call).
    pub fn next(&self) -> Option<Call> {
        self.calls.try_recv().ok()
    }
}

impl Caller {
    /// Posts `request` and waits (at most [`ANSWER_DEADLINE`]) for the answer line.
    pub fn call(&self, request: Request) -> String {
        let (tx, rx) = mpsc::sync_channel(1);
        if self.calls.send(Call { request, answer: tx }).is_err() {
            return serde_json::json!({"ok": false, "error": "the router is stopping"}).to_string();
        }
        let one: u64 = 1;
        // SAFETY: writes 8 bytes to our own descriptor of the eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
        rx.recv_timeout(ANSWER_DEADLINE).unwrap_or_else(|_| {
            serde_json::json!({"ok": false, "error": "the forwarding loop did not answer within 5 s"}).to_string()
        })
    }
}
