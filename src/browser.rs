//! The browser's run loop: terminal guard, loaders, and one synchronous loop over a channel.
//! Events are drained before each frame, frames are drawn on demand at most ~60 a second, and
//! the app's effects are carried out here: loads go to the loader, session operations to an
//! `ActionHandler` (the seam to the store writers and resume).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use chrono::Utc;
use color_eyre::eyre::WrapErr;
use crossterm::event::{Event as Term, KeyEventKind, MouseButton, MouseEventKind};

use crate::app::{Action, App, Effect, Options, SessionOp};
use crate::config::Config;
use crate::loader::{Event, Loader, Request};
use crate::model::SessionSummary;
use crate::store::Stores;
use crate::tui::Tui;
use crate::ui::{self, Theme};

/// A frame at most every 16 ms; ages refresh at least every few seconds.
const FRAME: Duration = Duration::from_millis(16);
const IDLE: Duration = Duration::from_secs(5);

/// What a session operation can use.
pub struct OpContext<'a> {
    pub stores: &'a Stores,
    pub config: &'a Config,
    /// Hand the terminal to a child process (resume) and take it back.
    pub tui: &'a mut Tui,
}

/// Carries out the session operations the app asks for (`Effect::Session`). Returns the
/// sentence for the status bar.
pub trait ActionHandler {
    fn handle(&mut self, op: SessionOp, s: &SessionSummary, cx: &mut OpContext<'_>) -> String;
}

/// The default handler: metadata writes through the `Store` trait, fork, undo delete, and
/// resume through the configured command. Delete, rename and export need a prompt in the
/// browser and are left to the CLI until that prompt exists.
pub struct StoreOps;

impl ActionHandler for StoreOps {
    fn handle(&mut self, op: SessionOp, s: &SessionSummary, cx: &mut OpContext<'_>) -> String {
        let store = cx.stores.store_for(s);
        let r = s.reference();
        let done = |res: crate::error::Result<String>| res.unwrap_or_else(|e| e.to_string());
        match op {
            SessionOp::TogglePin => done(
                store
                    .set_pinned(&s.id, !s.pinned())
                    .map(|_| format!("{} {r}", if s.pinned() { "unpinned" } else { "pinned" })),
            ),
            SessionOp::ToggleUnread => done(
                store
                    .set_unread(&s.id, !s.unread)
                    .map(|_| format!("marked {r} {}", if s.unread { "read" } else { "unread" })),
            ),
            SessionOp::ToggleArchive => done(
                store
                    .set_archived(&s.id, !s.archived)
                    .map(|_| format!("{} {r}", if s.archived { "unarchived" } else { "archived" })),
            ),
            SessionOp::Fork => done(
                store
                    .fork(&s.id, None)
                    .map(|id| format!("forked {r} into {}:{id}", s.store)),
            ),
            SessionOp::UndoDelete => {
                done(store.undo_delete(&s.id).map(|_| format!("restored {r}")))
            }
            SessionOp::Resume => resume(s, cx),
            SessionOp::Delete | SessionOp::Rename | SessionOp::Export => format!(
                "{} is not available in the browser yet; use `spool {} {r}`",
                op.name(),
                op.name()
            ),
        }
    }
}

/// Resume in the agent: the pre-flight checks and the shell-free command of
/// `resume::plan`, run in the session's cwd with the terminal (and the input thread) handed
/// over, then the browser restored as it was.
fn resume(s: &SessionSummary, cx: &mut OpContext<'_>) -> String {
    let plan = match crate::resume::plan(s, cx.stores.store_for(s), &cx.config.resume.commands()) {
        Ok(p) => p,
        Err(e) => return e.to_string(),
    };
    match cx.tui.suspend(|| plan.run()) {
        Ok(Ok(0)) => format!("back from {}", s.reference()),
        Ok(Ok(code)) => format!("`{}` exited with status {code}", plan.argv[0]),
        Ok(Err(e)) => e.to_string(),
        Err(e) => format!("terminal error after resume: {e}"),
    }
}

/// Open the browser over `stores` with `config`; returns when the user quits.
pub fn run(stores: Stores, config: Config) -> color_eyre::Result<()> {
    run_with(stores, config, &mut StoreOps)
}

/// `run` with another handler for session operations.
pub fn run_with(
    stores: Stores,
    config: Config,
    handler: &mut dyn ActionHandler,
) -> color_eyre::Result<()> {
    let (tx, rx) = mpsc::channel::<Event>();
    let wake_pending = Arc::new(AtomicBool::new(false));
    let notify = {
        let (tx, pending) = (tx.clone(), wake_pending.clone());
        Arc::new(move || {
            if !pending.swap(true, Ordering::SeqCst) {
                let _ = tx.send(Event::Wake);
            }
        })
    };
    let cwd = std::env::current_dir()
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let mut opts = Options::new(Utc::now());
    opts.filter = config.initial_filter(cwd.as_deref());
    opts.cwd = cwd;
    opts.keymap = config.keymap.clone();
    opts.notify = notify;
    if let Some(w) = config.sidebar_width {
        opts.sidebar_width = w;
    }
    let mut app = App::new(opts);
    let theme = Theme::named(&config.theme, Theme::no_color_env());

    let stores = Arc::new(stores);
    let mut tui = Tui::new(tx.clone()).wrap_err("could not set up the terminal")?;
    let loader = Loader::start(stores.clone(), tx.clone());
    let size = tui
        .terminal
        .size()
        .wrap_err("could not read the terminal size")?;
    app.update(Action::Resize(size.width, size.height));

    let mut last_draw = Instant::now() - FRAME;
    loop {
        app.now = Utc::now();
        wake_pending.store(false, Ordering::SeqCst);
        app.update(Action::Tick);
        tui.draw(|f| ui::draw(f, &mut app, &theme))
            .wrap_err("could not draw")?;
        last_draw = last_draw.max(Instant::now());

        // Block for the first event, then keep the frame budget while draining the rest.
        let first = match rx.recv_timeout(IDLE) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut events: Vec<Event> = first.into_iter().collect();
        let wait = FRAME.saturating_sub(last_draw.elapsed());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        events.extend(rx.try_iter());
        last_draw = Instant::now();

        for e in events {
            for action in to_actions(&app, e) {
                for fx in app.update(action) {
                    match fx {
                        Effect::Quit => {}
                        Effect::Load {
                            token,
                            summary,
                            view,
                            rounds,
                        } => loader.request(Request {
                            token,
                            summary: *summary,
                            view,
                            rounds,
                        }),
                        Effect::Session { op, summary } => {
                            let mut cx = OpContext {
                                stores: &stores,
                                config: &config,
                                tui: &mut tui,
                            };
                            let message = handler.handle(op, &summary, &mut cx);
                            app.update(Action::OpDone { message });
                            loader.refresh(&stores, &summary, &tx);
                            loader.poke();
                        }
                    }
                }
            }
            if app.quit {
                break;
            }
        }
        if app.quit {
            break;
        }
    }
    drop(tui);
    Ok(())
}

/// Map one event to actions. The only place key kinds are filtered (presses only).
fn to_actions(app: &App, e: Event) -> Vec<Action> {
    match e {
        Event::Action(a) => vec![a],
        Event::Wake => Vec::new(),
        Event::Input(Term::Key(k)) if k.kind == KeyEventKind::Press => {
            app.keymap.lookup(app.ctx(), &k).into_iter().collect()
        }
        Event::Input(Term::Mouse(m)) => match m.kind {
            MouseEventKind::ScrollDown => vec![Action::Scroll {
                col: m.column,
                row: m.row,
                lines: 3,
            }],
            MouseEventKind::ScrollUp => vec![Action::Scroll {
                col: m.column,
                row: m.row,
                lines: -3,
            }],
            MouseEventKind::Down(MouseButton::Left) => vec![Action::Click {
                col: m.column,
                row: m.row,
            }],
            _ => Vec::new(),
        },
        Event::Input(Term::Resize(w, h)) => vec![Action::Resize(w, h)],
        Event::Input(Term::Paste(s)) => vec![Action::Paste(s)],
        Event::Input(_) => Vec::new(),
    }
}
