//! One testbed (`qoslab_router::testbed`: h1 ── r ── h2) with its work
//! folder, and the router runs on it; everything registered with
//! [`crate::cleanup`] before it is made.

use crate::cleanup;
use qoslab_router::testbed::Netns;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `--router PATH`: the qoslab-router binary to run (default: the one beside this binary).
pub static ROUTER: OnceLock<PathBuf> = OnceLock::new();
/// `--rt`: run the router under `chrt -f 50` (SCHED_FIFO), out of the way of the host's other load.
pub static REALTIME: OnceLock<bool> = OnceLock::new();

fn router_exe() -> PathBuf {
    ROUTER.get().cloned().unwrap_or_else(|| std::env::current_exe().unwrap().with_file_name("qoslab-router"))
}

pub struct Bed {
    pub net: Netns,
    pub dir: PathBuf,
}

impl Bed {
    /// A testbed under prefix `<tag><pid>`.
    pub fn new(tag: &str) -> Bed {
        let p = format!("{tag}{}", std::process::id() % 100_000);
        let dir = std::env::temp_dir().join(format!("{p}.bench"));
        let net = cleanup::locked(|o| {
            o.prefix(&p);
            o.dir(dir.clone());
            std::fs::create_dir_all(&dir).unwrap();
            Netns::new(&p).unwrap_or_else(|e| panic!("{e}"))
        });
        Bed { net, dir }
    }

    pub fn ns(&self, n: &str) -> String {
        self.net.ns(n)
    }
    pub fn dev(&self, n: &str) -> String {
        self.net.dev(n)
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.join("ctl.sock")
    }

    /// Starts the router with `router` lines in `[router]` (besides the
    /// interfaces and files) and `link` as `[link]`; waits for its socket.
    pub fn start(&self, router: &str, link: &str) -> Child {
        cleanup::locked(|o| {
            let c = self.spawn(router, link);
            o.router(c.id());
            c
        })
    }

    /// Writes the configuration and starts the router (with no signal blocked: the
    /// benchmark blocks SIGINT, SIGTERM and SIGHUP for its teardown thread, and a
    /// child inherits the mask).
    fn spawn(&self, router: &str, link: &str) -> Child {
        let cfg = self.dir.join("bench.toml");
        let d = self.dir.display();
        let text = format!(
            "[router]\na = \"{a}\"\nb = \"{b}\"\nstats = \"{d}/stats.jsonl\"\nout = \"{d}/out\"\n\
             control_socket = \"{d}/ctl.sock\"\n{router}\n[link]\ndelay = \"0s\"\n{link}",
            a = self.dev("a"),
            b = self.dev("b"),
        );
        std::fs::write(&cfg, text).unwrap();
        let _ = std::fs::remove_file(self.socket());
        let _ = std::fs::remove_file(self.dir.join("stats.jsonl"));
        let _ = std::fs::remove_dir_all(self.dir.join("out"));
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns("r")]);
        if REALTIME.get() == Some(&true) {
            cmd.args(["chrt", "-f", "50"]);
        }
        cmd.arg(router_exe())
            .arg("run")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.join("router.err")).unwrap());
        // SAFETY: the closure only calls pthread_sigmask (async-signal-safe) in the child.
        unsafe {
            cmd.pre_exec(|| {
                let set = cleanup::signals();
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                Ok(())
            });
        }
        // `ip netns exec` (and `chrt`) exec the router: the child's pid is the router's.
        let c = cmd.spawn().expect("start qoslab-router");
        let t0 = Instant::now();
        while !self.socket().exists() {
            let err = std::fs::read_to_string(self.dir.join("router.err")).unwrap_or_default();
            assert!(t0.elapsed() < Duration::from_secs(10), "qoslab-router did not start: {err}");
            std::thread::sleep(Duration::from_millis(10));
        }
        c
    }

    /// SIGTERM the router, wait for it; its `summary.json`.
    pub fn stop(&self, mut c: Child) -> serde_json::Value {
        // SAFETY: kill(2) on our child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let _ = c.wait();
        cleanup::locked(|o| o.router_gone(c.id()));
        let s = std::fs::read_to_string(self.dir.join("out/summary.json")).unwrap_or_default();
        serde_json::from_str(&s).unwrap_or_default()
    }

    /// A control command's answer.
    pub fn ctl(&self, cmd: &str) -> serde_json::Value {
        let a = qoslab_router::control::request(&self.socket(), cmd).unwrap_or_default();
        serde_json::from_str(&a).unwrap_or_default()
    }

    /// Runs a command in namespace `ns`.
    pub fn exec(&self, ns: &str, args: &[&str]) {
        let mut all = vec!["ip", "netns", "exec"];
        let ns = self.ns(ns);
        all.push(&ns);
        all.extend_from_slice(args);
        qoslab_router::testbed::sh(&all).unwrap_or_else(|e| panic!("{e}"));
    }

    /// The router-side interface `dev`'s received-packets counter (the kernel's, in `r`).
    pub fn rx_packets(&self, dev: &str) -> u64 {
        let o = Command::new("ip").args(["-n", &self.ns("r"), "-s", "-j", "link", "show", "dev", dev]).output();
        let v: serde_json::Value = o.ok().and_then(|o| serde_json::from_slice(&o.stdout).ok()).unwrap_or_default();
        v[0]["stats64"]["rx"]["packets"].as_u64().unwrap_or(0)
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
