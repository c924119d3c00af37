//! Teardown on SIGINT and SIGTERM (and SIGHUP): the benchmark's
//! namespaces, its router and its work folders go with it.
//!
//! `install()` blocks the three signals in the calling thread before any
//! other thread exists (every thread inherits the mask; the routers it
//! starts get an empty mask back, see `bed.rs`), then one thread waits for
//! them with `sigwait`: it takes the registry's lock and keeps it until it
//! exits, stops the routers that are running (by pid), deletes the
//! namespaces of every registered prefix and the registered folders, and
//! exits 128 + the signal. Work makes what it registers inside [`locked`]
//! (a namespace, a folder, a router's start), so what exists is always
//! registered, and nothing new is made once the teardown has begun.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// What the benchmark made and must take down.
#[derive(Default)]
pub struct Owned {
    prefixes: Vec<String>,
    routers: Vec<u32>,
    dirs: Vec<PathBuf>,
}

impl Owned {
    /// A testbed prefix whose namespaces (`<p>-h1`, `<p>-r`, `<p>-h2`) are ours.
    pub fn prefix(&mut self, p: &str) {
        self.prefixes.push(p.to_string());
    }
    /// A folder of ours.
    pub fn dir(&mut self, d: PathBuf) {
        self.dirs.push(d);
    }
    /// A running router of ours (the pid `ip netns exec` became).
    pub fn router(&mut self, pid: u32) {
        self.routers.push(pid);
    }
    /// That router has ended.
    pub fn router_gone(&mut self, pid: u32) {
        self.routers.retain(|p| *p != pid);
    }
}

static OWNED: Mutex<Owned> = Mutex::new(Owned { prefixes: Vec::new(), routers: Vec::new(), dirs: Vec::new() });

/// Runs `f` with the registry: what `f` makes and registers is made before
/// a teardown starts or not at all (the teardown holds the lock to the end).
pub fn locked<T>(f: impl FnOnce(&mut Owned) -> T) -> T {
    f(&mut OWNED.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The signals the teardown takes.
pub fn signals() -> libc::sigset_t {
    // SAFETY: sigset operations on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Takes SIGINT, SIGTERM and SIGHUP for the teardown. Call first, before any thread starts.
pub fn install() {
    let set = signals();
    // SAFETY: blocks the signals in this thread (inherited by every thread made after).
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    std::thread::spawn(move || {
        let mut sig: libc::c_int = 0;
        // SAFETY: waits for one of the blocked signals.
        unsafe { libc::sigwait(&set, &mut sig) };
        eprintln!("\nqoslab-router-bench: signal {sig}: tearing the testbed down");
        let mut o = OWNED.lock().unwrap_or_else(|p| p.into_inner());
        teardown(&mut o);
        std::process::exit(128 + sig);
    });
}

/// Has our child `pid` ended? (Reaps it if so; another thread's wait may have.)
fn ended(pid: u32) -> bool {
    let mut st = 0;
    // SAFETY: waitpid on a child of ours, without waiting.
    let r = unsafe { libc::waitpid(pid as i32, &mut st, libc::WNOHANG) };
    r != 0
}

/// Stops our routers (SIGTERM, then SIGKILL after 3 s), deletes our namespaces and folders.
fn teardown(o: &mut Owned) {
    for &pid in &o.routers {
        // SAFETY: kill(2) on a child of ours (not yet reaped, so its pid is not reused).
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
    let t0 = std::time::Instant::now();
    let mut live = o.routers.clone();
    while !live.is_empty() && t0.elapsed() < std::time::Duration::from_secs(3) {
        live.retain(|&p| !ended(p));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for &pid in &live {
        // SAFETY: as above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let mut st = 0;
        // SAFETY: reaps our child.
        unsafe { libc::waitpid(pid as i32, &mut st, 0) };
    }
    for p in &o.prefixes {
        for n in ["h1", "r", "h2"] {
            let _ = Command::new("ip").args(["netns", "del", &format!("{p}-{n}")]).output();
        }
    }
    for d in &o.dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}
