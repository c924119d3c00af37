//! CLOCK_MONOTONIC in nanoseconds, and sleeping until an instant of it.

/// Now on CLOCK_MONOTONIC (ns): the clock every namespace shares.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `t_ns` on CLOCK_MONOTONIC (returns at once if it has passed).
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: an absolute sleep on a valid timespec; EINTR is retried.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        if r != libc::EINTR {
            return;
        }
        if now_ns() >= t_ns {
            return;
        }
    }
}

/// Timer slack of 1 ns, so a sleep ends when asked (the default is 50 µs).
pub fn tight_timers() {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
