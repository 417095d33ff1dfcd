//! Real-terminal tests of the signals that end the browser: for each one spool can catch,
//! the built binary under tmux (`--demo`) is sent the signal; afterwards the terminal is
//! restored (`stty -a` shows echo and icanon; tmux sees the main screen, the cursor and no
//! mouse reporting), the exit status is 128 + signal and the demo copy is gone. SIGPIPE,
//! which Rust ignores, ends nothing.

mod common;

use common::tmux::{Tmux, demo_copies, restored, run_demo};

/// Start `--demo`, send `sig`, check what is left.
fn signal_restores_the_terminal(sig: libc::c_int) {
    let Some(t) = Tmux::new(&format!("sig{sig}")) else {
        return;
    };
    let tmp = run_demo(&t);
    t.wait_for("/ search");
    assert_eq!(demo_copies(&tmp).len(), 1, "the demo copy is in TMPDIR");
    // SAFETY: kill(2) with a pid and a signal number has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(t.spool_pid(), sig) }, 0);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains(&format!("EXIT={}", 128 + sig)), "{end}");
    restored(&end);
    t.modes_restored();
    // No litter: the temporary copy went with the process. What is left says which
    // writer brought it back.
    let left = demo_copies(&tmp);
    assert!(left.is_empty(), "left behind: {:?}", left_files(&tmp));
}

/// Every path under `dir`, for a failure's message.
fn left_files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    out
}

macro_rules! signal_tests {
    ($($name:ident: $sig:expr;)*) => {$(
        #[test]
        fn $name() {
            signal_restores_the_terminal($sig);
        }
    )*};
}

signal_tests! {
    sigterm_restores_the_terminal: libc::SIGTERM;
    sighup_restores_the_terminal: libc::SIGHUP;
    sigint_restores_the_terminal: libc::SIGINT;
    sigquit_restores_the_terminal: libc::SIGQUIT;
    sigusr1_restores_the_terminal: libc::SIGUSR1;
    sigusr2_restores_the_terminal: libc::SIGUSR2;
    sigalrm_restores_the_terminal: libc::SIGALRM;
    sigvtalrm_restores_the_terminal: libc::SIGVTALRM;
    sigprof_restores_the_terminal: libc::SIGPROF;
    sigxcpu_restores_the_terminal: libc::SIGXCPU;
    sigxfsz_restores_the_terminal: libc::SIGXFSZ;
    sigio_restores_the_terminal: libc::SIGIO;
    sigpwr_restores_the_terminal: libc::SIGPWR;
    sigstkflt_restores_the_terminal: libc::SIGSTKFLT;
    sigrtmin_restores_the_terminal: libc::SIGRTMIN();
    sigrtmin_plus_5_restores_the_terminal: libc::SIGRTMIN() + 5;
    sigrtmax_restores_the_terminal: libc::SIGRTMAX();
}

#[test]
fn sigpipe_ends_nothing() {
    let Some(t) = Tmux::new("sigpipe") else {
        return;
    };
    let tmp = run_demo(&t);
    t.wait_for("/ search");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(t.spool_pid(), libc::SIGPIPE) }, 0);
    // Still browsing: a key still works, and only `q` ends it.
    t.keys(&["?"]);
    // The overlay's own title: "help" alone is also in the top bar, and passing before
    // the overlay is drawn let Esc and q arrive together (Alt-q) under load.
    t.wait_until("the help overlay", |s| {
        !s.contains("EXIT=") && s.contains("esc closes")
    });
    // Esc and q sent at once would read as Alt-q.
    t.keys(&["Escape"]);
    t.wait_until("the help closed", |s| !s.contains("esc closes"));
    t.keys(&["q"]);
    let end = t.wait_for("STTY-DONE");
    assert!(end.contains("EXIT=0"), "{end}");
    restored(&end);
    t.modes_restored();
    assert_eq!(demo_copies(&tmp), Vec::<String>::new());
}
