//! The terminal guard. It owns every mode it turns on (raw mode, alternate screen, mouse
//! capture, bracketed paste) and one function, `restore`, undoes them all; `Drop`, the panic
//! hook and the exit-signal handler (every catchable signal that would end the process) all
//! call it. It also
//! owns the input thread, which can be paused so a child process (resume) gets the keyboard,
//! and which first watches for the terminal's acknowledgement of the first frame (`ack`).

pub mod ack;
use ack::{Ack, Outcome as AckOutcome, REQUEST};

use std::io::{self, Stdout, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the modes are on (so `restore` is idempotent and cheap to call from anywhere).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Held while a frame is written, and by the exit-signal handler from its restore to the
/// process exit: otherwise a frame being drawn when the signal lands is finished after the
/// restore, on the user's own screen.
static OUTPUT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Turn every mode on.
fn enter() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste,
        cursor::Hide
    )
}

/// Undo every mode `enter` turned on. Safe to call more than once and from any thread.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    // Best effort: each step runs even if an earlier one failed.
    let _ = execute!(out, EndSynchronizedUpdate);
    let _ = execute!(out, DisableBracketedPaste);
    let _ = execute!(out, DisableMouseCapture);
    let _ = execute!(out, LeaveAlternateScreen);
    let _ = execute!(out, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restore the terminal before the panic message is printed, then run the previous hook
/// (color-eyre's, when installed first).
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Whether a child (a resumed agent) owns the terminal: Ctrl-C and Ctrl-\ are meant for it
/// (it shares spool's process group), so they must not end spool.
static CHILD_IN_FOREGROUND: AtomicBool = AtomicBool::new(false);

/// Run `f` (which waits for a child in the foreground) with SIGINT and SIGQUIT left to
/// the child.
pub fn with_child_in_foreground<R>(f: impl FnOnce() -> R) -> R {
    CHILD_IN_FOREGROUND.store(true, Ordering::SeqCst);
    let r = f();
    CHILD_IN_FOREGROUND.store(false, Ordering::SeqCst);
    r
}

/// The signals whose default action ends the process and that arrive from outside (`kill`,
/// a timer, a resource limit): each is caught so the terminal is restored first. Left out:
/// SIGPIPE, which Rust's runtime ignores (a closed pipe is an `EPIPE` error, it ends
/// nothing); SIGKILL and SIGSTOP, which cannot be caught; and the faults (SIGSEGV, SIGBUS,
/// SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS), raised by the faulting instruction itself,
/// where a handler that returns would only fault again. The real-time signals the C library
/// hands out (`SIGRTMIN()..=SIGRTMAX()`, above the two glibc keeps for its threads) end the
/// process by default too, so they are caught like the rest.
fn exit_signals() -> Vec<libc::c_int> {
    use libc::{
        SIGALRM, SIGHUP, SIGINT, SIGIO, SIGPROF, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGVTALRM,
        SIGXCPU, SIGXFSZ,
    };
    #[allow(unused_mut)]
    let mut v = vec![
        SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
        SIGXFSZ, SIGIO,
    ];
    #[cfg(target_os = "linux")]
    {
        v.extend([libc::SIGPWR, libc::SIGSTKFLT]);
        v.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    }
    v
}

/// On any of `exit_signals`: restore the terminal, remove the `--demo` copy (exiting skips
/// destructors), and exit with 128 + signal. Installed once per process: by the browser,
/// and by `main` for any `--demo` run.
pub fn handle_exit_signals() -> io::Result<()> {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    use libc::{SIGINT, SIGQUIT};
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if *installed {
        return Ok(());
    }
    // Whether Ctrl-C belongs to a child is decided in the handler itself, when the signal
    // arrives: a thread reading the signal later could find the child already gone (it died
    // of that very Ctrl-C) and end spool too. The handler only writes the signal number to
    // a socket (async-signal-safe); a thread restores and exits.
    let (mut rx, tx) = UnixStream::pair()?;
    // A full socket (a burst of signals) must never block inside the handler.
    tx.set_nonblocking(true)?;
    for sig in exit_signals() {
        let tx = tx.try_clone()?;
        let action = move || {
            let for_child =
                matches!(sig, SIGINT | SIGQUIT) && CHILD_IN_FOREGROUND.load(Ordering::SeqCst);
            if !for_child {
                let _ = (&tx).write(&[sig as u8]);
            }
        };
        // SAFETY: the action only loads an atomic and writes to a socket, both
        // async-signal-safe; it allocates nothing and takes no lock.
        unsafe { signal_hook::low_level::register(sig, action) }?;
    }
    thread::Builder::new()
        .name("spool-signals".into())
        .spawn(move || {
            let mut sig = [0u8; 1];
            if rx.read_exact(&mut sig).is_ok() {
                // Never released: no frame may follow the restore.
                let _frames_stopped = OUTPUT.lock().unwrap_or_else(|e| e.into_inner());
                restore();
                crate::demo::remove_live();
                std::process::exit(128 + i32::from(sig[0]));
            }
        })?;
    *installed = true;
    Ok(())
}

/// Terminal input arrives on this channel as raw crossterm events.
pub trait InputSink: Send + 'static {
    fn send(&self, e: crossterm::event::Event) -> bool;
}

impl<T: From<crossterm::event::Event> + Send + 'static> InputSink for Sender<T> {
    fn send(&self, e: crossterm::event::Event) -> bool {
        Sender::send(self, T::from(e)).is_ok()
    }
}

/// The guard: the ratatui terminal, plus the input thread's pause switch.
pub struct Tui {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
    paused: Arc<AtomicBool>,
    parked: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    ack: Arc<Ack>,
}

impl Tui {
    /// Take over the terminal and start the input thread feeding `sink`.
    pub fn new(sink: impl InputSink) -> io::Result<Tui> {
        install_panic_hook();
        handle_exit_signals()?;
        enter()?;
        let terminal = match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        let paused = Arc::new(AtomicBool::new(false));
        let parked = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let ack = Arc::new(Ack::new(ack::CAP)?);
        ack.install();
        let (p, k, s, a) = (paused.clone(), parked.clone(), stop.clone(), ack.clone());
        thread::Builder::new()
            .name("spool-input".into())
            .spawn(move || input_loop(sink, p, k, s, &a))?;
        Ok(Tui {
            terminal,
            paused,
            parked,
            stop,
            ack,
        })
    }

    /// Draw one frame inside a synchronized update (no flicker on terminals that support it).
    pub fn draw(&mut self, f: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
        self.write_frame(f, false)
    }

    /// Draw the first frame that shows rows, then ask the terminal to acknowledge it (see
    /// `ack`); `Tui::ack().wait()` then waits for the answer.
    pub fn draw_and_ask(&mut self, f: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
        self.write_frame(f, true)
    }

    fn write_frame(&mut self, f: impl FnOnce(&mut ratatui::Frame), ask: bool) -> io::Result<()> {
        let _writing = OUTPUT.lock().unwrap_or_else(|e| e.into_inner());
        if !ACTIVE.load(Ordering::SeqCst) {
            // Restored for an exit that is under way: the screen is the user's again.
            return Ok(());
        }
        execute!(io::stdout(), BeginSynchronizedUpdate)?;
        let r = self.terminal.draw(f).map(|_| ());
        execute!(io::stdout(), EndSynchronizedUpdate)?;
        r?;
        if !ask {
            // A frame without rows before them (an empty or slow store): no acknowledgement
            // will be asked for, so the input thread reads as usual from now.
            self.ack.release(AckOutcome::Skipped);
        } else {
            // Armed before the request is written: its answer is then never taken for a key.
            self.ack.arm();
            let mut out = io::stdout();
            out.write_all(REQUEST)?;
            out.flush()?;
        }
        Ok(())
    }

    /// The first frame's acknowledgement, for the threads that wait for it.
    pub fn ack(&self) -> Arc<Ack> {
        self.ack.clone()
    }

    /// Give the terminal to `run` (a child process): input paused, modes off; then take it
    /// back and repaint from scratch.
    pub fn suspend<R>(&mut self, run: impl FnOnce() -> R) -> io::Result<R> {
        self.paused.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_millis(500);
        while !self.parked.load(Ordering::SeqCst) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        // Ctrl-C is the agent's from the moment the screen is handed over, not only once
        // the child exists: one pressed in between ended spool (a flaky tmux test).
        let r = with_child_in_foreground(|| {
            restore();
            run()
        });
        enter()?;
        self.terminal.clear()?;
        self.paused.store(false, Ordering::SeqCst);
        Ok(r)
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        restore();
    }
}

fn input_loop(
    sink: impl InputSink,
    paused: Arc<AtomicBool>,
    parked: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    ack: &Ack,
) {
    // crossterm reads from stdin when it is a terminal, else from /dev/tty: the gate
    // watches the same terminal.
    let dev_tty;
    // SAFETY: `isatty` only inspects the descriptor.
    let tty = if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
        libc::STDIN_FILENO
    } else {
        match std::fs::File::open("/dev/tty") {
            Ok(f) => {
                dev_tty = f;
                std::os::fd::AsRawFd::as_raw_fd(&dev_tty)
            }
            Err(_) => {
                ack.release(AckOutcome::Skipped);
                -1
            }
        }
    };
    if tty >= 0 && !ack.watch(tty, || read_ready(&sink), || stop.load(Ordering::SeqCst)) {
        return;
    }
    crate::keytrace::phase_since_launch(&format!("input_{:?}", ack.wait()));
    while !stop.load(Ordering::SeqCst) {
        if paused.load(Ordering::SeqCst) {
            parked.store(true, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        parked.store(false, Ordering::SeqCst);
        // Short polls so a pause request is honoured quickly and no key is read for us
        // while a child process owns the terminal.
        match crossterm::event::poll(Duration::from_millis(30)) {
            // A pause may have been asked for while polling: leave the key to the child.
            Ok(true) if paused.load(Ordering::SeqCst) => {}
            Ok(true) => match crossterm::event::read() {
                Ok(e) => {
                    crate::keytrace::input_read();
                    if !sink.send(e) {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {}
            Err(_) => return,
        }
    }
}

/// Hand every event crossterm can read now to `sink`; false when input has ended.
fn read_ready(sink: &impl InputSink) -> bool {
    loop {
        match crossterm::event::poll(Duration::ZERO) {
            Ok(true) => match crossterm::event::read() {
                Ok(e) => {
                    crate::keytrace::input_read();
                    if !sink.send(e) {
                        return false;
                    }
                }
                Err(_) => return false,
            },
            Ok(false) => return true,
            Err(_) => return false,
        }
    }
}
