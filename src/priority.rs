//! Thread priorities: the browser's background work (the stores' listings and stat passes,
//! the watchers' setup, the catalog's decode) yields the core to the UI thread, which
//! answers keys. On two cores at 100k sessions the checks (about 1.7 s of CPU) and notify's
//! recursive walk (about 1 s) left a key waiting for a core for up to 259 ms (issue 10).

/// The nice value of background threads: CFS then gives a runnable UI thread (nice 0)
/// about nine tenths of a core they share, and wakes it ahead of them.
pub const BACKGROUND_NICE: i32 = 10;

/// Lower the calling thread's priority to `BACKGROUND_NICE`; threads it starts from then on
/// inherit it (the check pass's workers, the inotify reading thread). Never raises it again,
/// and never fails the caller: at worst the thread keeps its priority.
pub fn background() {
    // On Linux the nice value is per thread, and `0` is the calling thread; elsewhere it is
    // the whole process's (the UI's too), so it is left alone.
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority reads its integer arguments only.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE);
    }
}

/// The calling thread's nice value (Linux; 0 elsewhere), for tests.
pub fn current_nice() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: as above. errno is cleared first: -1 is also a valid nice value.
    unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, 0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_background_thread_and_its_children_are_niced_the_caller_is_not() {
        let before = current_nice();
        let (own, child) = std::thread::spawn(|| {
            background();
            (
                current_nice(),
                std::thread::spawn(current_nice).join().unwrap(),
            )
        })
        .join()
        .unwrap();
        assert_eq!(own, BACKGROUND_NICE);
        assert_eq!(
            child, BACKGROUND_NICE,
            "the check pass's workers inherit it"
        );
        assert_eq!(current_nice(), before, "the calling thread keeps its own");
    }
}
