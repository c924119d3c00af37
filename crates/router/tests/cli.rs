//! The command line without root: a bad configuration or command line is
//! refused with `file:line: field: ...` and exit status 2, never a panic.

use std::process::Command;

fn router(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_qoslab-router")).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), text)
}

fn write(name: &str, text: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("qoslab-router-cli-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn cli_bad_config_exits_2_naming_file_line_and_field() {
    let p = write(
        "bad.toml",
        "[router]\na = \"lo\"\nb = \"lo2\"\n[link]\nrate = \"10Mbps\"\ndelay = \"0s\"\n\
         queue = { type = \"red\", limit = \"10pkts\", min_th = 9, max_th = 3 }\n",
    );
    for verb in ["check", "run"] {
        let (code, out) = router(&[verb, p.to_str().unwrap()]);
        assert_eq!(code, 2, "{verb}: {out}");
        assert!(out.contains(":7: link.queue.max_th: "), "{verb}: {out}");
        assert!(!out.contains("panicked"), "{out}");
    }
    std::fs::remove_file(p).unwrap();
}

#[test]
fn cli_missing_interface_and_unknown_queue_type_are_config_errors() {
    let p = write(
        "noif.toml",
        "[router]\na = \"qr-none-a\"\nb = \"qr-none-b\"\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\n",
    );
    let (code, out) = router(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("router.a: no interface named \"qr-none-a\""), "{out}");
    let q = write(
        "q.toml",
        "[router]\na = \"x\"\nb = \"y\"\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\nqueue = { type = \"sfq\" }\n",
    );
    let (code, out) = router(&["check", q.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("link.queue") && !out.contains("panicked"), "{out}");
    std::fs::remove_file(p).unwrap();
    std::fs::remove_file(q).unwrap();
}

#[test]
fn cli_usage_and_unreadable_file_exit_2() {
    assert_eq!(router(&[]).0, 2);
    assert_eq!(router(&["frob"]).0, 2);
    let (code, out) = router(&["check", "/nonexistent/r.toml"]);
    assert_eq!(code, 2);
    assert!(out.contains("cannot read the router configuration"), "{out}");
}

#[test]
fn cli_unknown_io_mode_is_a_config_error_naming_the_choices() {
    let p =
        write("io.toml", "[router]\na = \"x\"\nb = \"y\"\nio = \"netmap\"\n[link]\nrate = \"1Mbps\"\ndelay = \"0s\"\n");
    let (code, out) = router(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(":4: router.io") && out.contains("af_packet") && out.contains("af_xdp"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
    std::fs::remove_file(p).unwrap();
}
