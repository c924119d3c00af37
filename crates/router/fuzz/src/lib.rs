//! The AFL++ persistent-mode loop for Rust targets, against Debian's
//! `afl-compiler-rt.o` (linked in by the Makefile's RUSTFLAGS), as the
//! `afl` crate does it: the two markers tell afl-fuzz to use a deferred
//! fork server and persistent mode, and `__afl_sharedmem_fuzzing = 1`
//! tells the runtime's fork server to ask for shared-memory test cases:
//! afl-fuzz then copies each input into a shared buffer
//! (`__afl_fuzz_ptr`, `__afl_fuzz_len`) instead of writing it to a file
//! the target reads on standard input (a write, a truncate and a seek in
//! afl-fuzz and a read here per input). Outside afl-fuzz the buffer is
//! absent and the one input is read from standard input (at most 1 MB,
//! afl's largest input). A panic aborts (`panic = "abort"`), which afl
//! counts as a crash.

use std::io::Read;

extern "C" {
    fn __afl_persistent_loop(counter: u32) -> i32;
    fn __afl_manual_init();
    static __afl_fuzz_ptr: *const u8;
    static __afl_fuzz_len: *const u32;
}

/// Read by the runtime's fork server (a weak symbol there, 0 by default).
#[no_mangle]
#[used]
pub static mut __afl_sharedmem_fuzzing: i32 = 1;

#[used]
static PERSIST_MARKER: &[u8] = b"##SIG_AFL_PERSISTENT##\0";
#[used]
static DEFER_MARKER: &[u8] = b"##SIG_AFL_DEFER_FORKSRV##\0";

/// afl's largest input (`MAX_FILE`), the bound on a standard-input read.
const MAX_INPUT: u64 = 1 << 20;

/// Runs `f` on every input afl-fuzz gives (or once on stdin without afl).
pub fn fuzz(mut f: impl FnMut(&[u8])) {
    // Keep the markers in the binary.
    let _ = unsafe { std::ptr::read_volatile(&PERSIST_MARKER) };
    let _ = unsafe { std::ptr::read_volatile(&DEFER_MARKER) };
    unsafe { __afl_manual_init() };
    let mut input = Vec::new();
    while unsafe { __afl_persistent_loop(10_000) } != 0 {
        // SAFETY: the runtime sets both before the first round (in `__afl_manual_init`, from
        // afl-fuzz's shared test-case buffer) and afl-fuzz writes the buffer only between rounds.
        let shared = unsafe {
            let (ptr, len) = (std::ptr::read_volatile(&raw const __afl_fuzz_ptr), __afl_fuzz_len);
            (!ptr.is_null()).then(|| std::slice::from_raw_parts(ptr, *len as usize))
        };
        match shared {
            Some(data) => f(data),
            None => {
                input.clear();
                if std::io::stdin().take(MAX_INPUT).read_to_end(&mut input).is_ok() {
                    f(&input);
                }
            }
        }
    }
}
