//! The AFL++ persistent-mode loop for Rust targets, against Debian's
//! `afl-compiler-rt.o` (linked in by the Makefile's RUSTFLAGS), as the
//! `afl` crate does it: the two markers tell afl-fuzz to use a deferred
//! fork server and persistent mode; each round reads one input from
//! standard input. A panic aborts (`panic = "abort"`), which afl counts as
//! a crash.

use std::io::Read;

extern "C" {
    fn __afl_persistent_loop(counter: u32) -> i32;
    fn __afl_manual_init();
}

#[used]
static PERSIST_MARKER: &[u8] = b"##SIG_AFL_PERSISTENT##\0";
#[used]
static DEFER_MARKER: &[u8] = b"##SIG_AFL_DEFER_FORKSRV##\0";

/// Runs `f` on every input afl-fuzz gives (or once on stdin without afl).
pub fn fuzz(mut f: impl FnMut(&[u8])) {
    // Keep the markers in the binary.
    let _ = unsafe { std::ptr::read_volatile(&PERSIST_MARKER) };
    let _ = unsafe { std::ptr::read_volatile(&DEFER_MARKER) };
    unsafe { __afl_manual_init() };
    let mut input = Vec::new();
    while unsafe { __afl_persistent_loop(10_000) } != 0 {
        input.clear();
        if std::io::stdin().read_to_end(&mut input).is_ok() {
            f(&input);
        }
    }
}
