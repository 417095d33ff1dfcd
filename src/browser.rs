//! The browser's run loop: terminal guard, loaders, and one synchronous loop over a channel.
//! Events are drained before each frame, frames are drawn on demand at most ~60 a second, and
//! the app's effects are carried out here: loads go to the loader, session operations to the
//! ops worker thread (writes and their fsyncs never stall the UI), resume to the terminal.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use chrono::Utc;
use color_eyre::eyre::WrapErr;
use crossterm::event::{Event as Term, KeyEventKind, MouseButton, MouseEventKind};

use crate::app::list::{Handoff, PREPARE_FROM};
use crate::app::{Action, App, Effect, OpInput, Options, Outcome, SessionOp};
use crate::config::Config;
use crate::indexer::Indexer;
use crate::loader::{Event, Loader, Request};
use crate::model::SessionSummary;
use crate::model::StoreKind;
use crate::store::Stores;
use crate::tui::Tui;
use crate::ui::{self, Theme};

/// A frame at most every 16 ms; ages refresh at least every few seconds.
const FRAME: Duration = Duration::from_millis(16);
const IDLE: Duration = Duration::from_secs(5);
/// The longest the first frame waits for rows before it shows an empty list.
const FIRST_FRAME_WAIT: Duration = Duration::from_millis(500);

mod ops;
mod preview_wait;
mod tidy;
use ops::OpsWorker;
pub use ops::perform;

/// Resume in the agent: the pre-flight checks and the shell-free command of
/// `resume::plan`, run in the session's cwd with the terminal (and the input thread) handed
/// over, then the browser restored as it was.
fn resume(
    s: &SessionSummary,
    stores: &Stores,
    config: &Config,
    tui: &mut Tui,
    fork: bool,
    unarchive_ok: bool,
) -> String {
    let cmds = config.resume.commands();
    let plan = if fork {
        crate::resume::fork_plan(s, stores.store_for(s), &cmds, unarchive_ok)
    } else {
        crate::resume::plan_confirmed(s, stores.store_for(s), &cmds, unarchive_ok)
    };
    let plan = match plan {
        Ok(p) => p,
        Err(e) => return e.to_string(),
    };
    // Checked before the terminal is handed over, so a refusal does not flash the screen.
    if let Some(p) = plan.problem() {
        return p;
    }
    match tui.suspend(|| plan.run()) {
        Ok(Ok(0)) => format!("back from {}", s.reference()),
        Ok(Ok(code)) => format!("`{}` exited with status {code}", plan.argv[0]),
        Ok(Err(e)) => e.to_string(),
        Err(e) => format!("terminal error after resume: {e}"),
    }
}

/// Where the app's effects go: the pane loader, the ops worker, and resume (which needs the
/// terminal).
struct Effects<'a> {
    loader: &'a Loader,
    indexer: &'a Indexer,
    ops: &'a OpsWorker,
    stores: &'a Arc<Stores>,
    config: &'a Config,
    tx: &'a mpsc::Sender<Event>,
}

impl Effects<'_> {
    /// Carry out what one `App::update` returned. Every update's effects come here, so no
    /// load request is lost (a lost one leaves the pane at "loading…").
    fn carry_out(&self, fx: Vec<Effect>, tui: &mut Tui) {
        for f in fx {
            match f {
                Effect::Quit => {}
                Effect::TextQuery {
                    token,
                    query,
                    filter,
                } => self.indexer.search(token, query, filter),
                Effect::Load {
                    token,
                    summary,
                    view,
                    rounds,
                } => self.loader.request(Request {
                    token,
                    summary: *summary,
                    view,
                    rounds,
                }),
                // The checks before resume run git, so they run on a thread of their own and
                // come back as `Action::ResumeChecked`; the app then asks or resumes. A confirmed
                // unarchive comes after those checks, so it resumes at once.
                Effect::Session {
                    op: SessionOp::Resume,
                    summary,
                    input,
                } if !matches!(input, OpInput::Checked | OpInput::UnarchiveFirst) => {
                    self.check_resume(*summary)
                }
                // Resume owns the terminal, so it runs here, between frames. A store spool
                // only reads forks in its agent (claude --fork-session), which owns the
                // terminal like resume.
                Effect::Session {
                    op: op @ (SessionOp::Resume | SessionOp::Fork),
                    summary,
                    input,
                } if op == SessionOp::Resume || summary.store.read_only() => {
                    let fork = op == SessionOp::Fork;
                    let ok = input == OpInput::UnarchiveFirst;
                    let message = resume(&summary, self.stores, self.config, tui, fork, ok);
                    // The agent may have written to the session while it ran.
                    self.loader.refresh(self.stores, &summary, self.tx);
                    let done = Outcome::message(message);
                    let _ = self.tx.send(Event::OpFinished(Box::new(done)));
                }
                Effect::Session { op, summary, input } => {
                    let _ = self.ops.jobs.send((op, summary, input));
                }
            }
        }
    }
}

impl Effects<'_> {
    /// Run `preflight::check` for `s` off the UI thread (git may be slow or missing).
    fn check_resume(&self, s: SessionSummary) {
        let (stores, tx) = (Arc::clone(self.stores), self.tx.clone());
        let cmds = self.config.resume.commands();
        std::thread::spawn(move || {
            // Unarchiving is asked about after the checks, so the plan here assumes a yes.
            let report = match crate::resume::plan_confirmed(&s, stores.store_for(&s), &cmds, true)
            {
                Ok(plan) => crate::preflight::check(&s, &plan.cwd, plan.problem(), false),
                Err(e) => crate::preflight::Report {
                    refusals: vec![e.to_string()],
                    ..Default::default()
                },
            };
            let _ = tx.send(Event::Action(Action::ResumeChecked(Box::new(s), report)));
        });
    }
}

/// Open the browser over `stores` with `config`; returns when the user quits.
pub fn run(stores: Stores, config: Config) -> color_eyre::Result<()> {
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
    opts.mark_read_on_open = config.mark_read_on_open;
    opts.time = crate::app::TimeFmt::local();
    if let Some(w) = config.sidebar_width {
        opts.sidebar_width = w;
    }
    opts.searched = stores
        .stores
        .iter()
        .map(|s| format!("{:<8}{}", s.kind(), s.sessions_dir().display()))
        .collect();
    let launched = Instant::now();
    crate::keytrace::launched(launched);
    let mut app = App::new(opts);
    let theme = Theme::named(&config.theme, Theme::no_color_env());

    // spool's catalog. Its head (the first screenful in final order and the row count) is
    // all the first frame needs; the whole catalog is decoded right after that frame.
    let cache = crate::hints::cache_dir();
    let mut first_fx = Vec::new();
    let head =
        (cache.as_deref()).and_then(|c| crate::catalog::warm::head(c, &stores, &app.list.filter));
    let head_keys: std::collections::HashSet<(StoreKind, String)> = match head {
        Some(h) => {
            let keys = h.rows.iter().map(|r| (r.store, r.id.to_string())).collect();
            first_fx = app.update(Action::Rows(h.rows));
            app.list.expect(h.total as usize);
            keys
        }
        None => Default::default(),
    };
    let stores = Arc::new(stores);
    let mut tui = Tui::new(tx.clone()).wrap_err("could not set up the terminal")?;
    let size = tui
        .terminal
        .size()
        .wrap_err("could not read the terminal size")?;
    app.update(Action::Resize(size.width, size.height));
    // A cold start reads a screenful first, not a fixed 32 rows.
    crate::loader::set_screenful(app.list_rows_visible());
    // With rows from the catalog, the first frame is drawn before any background thread
    // starts: on two cores, the stat pass, the watcher's walk, the index and the top
    // session's preview all compete with it, and none of them changes the rows it shows.
    let mut drawn = false;
    // The first frame with rows asks the terminal to acknowledge it, and no background
    // thread starts before the answer (or `tui::ack::CAP`): the terminal (tmux) must still
    // read and parse the frame, and the decode and stat passes took both cores (issue 10).
    let ack = tui.ack();
    let mut first_frame = |app: &mut App, fx: &mut Vec<_>| -> color_eyre::Result<()> {
        if !drawn && app.list.total_rows() > 0 {
            fx.extend(app.update(Action::Tick));
            tui.draw_and_ask(|f| ui::draw(f, app, &theme))
                .wrap_err("could not draw")?;
            app.list.shown();
            drawn = true;
        }
        Ok(())
    };
    first_frame(&mut app, &mut first_fx)?;
    crate::keytrace::phase("first_frame", launched);
    // With the head on screen, the whole catalog is decoded on the loader's thread while the
    // UI answers keys (at 100k sessions that decode is about 360 ms); without it, the first
    // frame waits for the catalog, as it must never show an empty list.
    let loader = match cache {
        Some(c) if !head_keys.is_empty() => {
            terminal_read(&ack, launched);
            let (s, tx) = (stores.clone(), tx.clone());
            // The catalog's rows are also put in order (and their matcher items started) on
            // the loader's thread: on the UI thread that held a key typed then for 76–300 ms.
            let seed = app.list.seed();
            Loader::start_checking_early(stores.clone(), tx.clone(), move |give| {
                let (actions, warm) = crate::catalog::warm::cached(&c, &s, head_keys);
                // The stores check now, beside the rows' ordering below; their news follows
                // the rows.
                give(Some(warm));
                crate::keytrace::phase("catalog_read", launched);
                let mut seed = Some(seed);
                for a in actions {
                    let a = match a {
                        Action::Cached(rows) if rows.len() >= PREPARE_FROM => match seed.take() {
                            Some(seed) => Action::Prepared(Handoff::new(seed.prepare(rows))),
                            None => Action::Cached(rows),
                        },
                        a => a,
                    };
                    if tx.send(Event::Action(a)).is_err() {
                        return;
                    }
                }
                crate::keytrace::phase("catalog_decoded", launched);
            })
        }
        cache => {
            let warm = cache.map(|c| {
                let (actions, warm) = crate::catalog::warm::cached(&c, &stores, head_keys);
                for a in actions {
                    first_fx.extend(app.update(a));
                }
                warm
            });
            first_frame(&mut app, &mut first_fx)?;
            crate::keytrace::phase("catalog_decoded", launched);
            terminal_read(&ack, launched);
            Loader::start_with(stores.clone(), tx.clone(), warm)
        }
    };
    let ops = OpsWorker::start(stores.clone(), tx.clone());
    let indexer = Indexer::start(stores.clone(), tx.clone());

    let effects = Effects {
        loader: &loader,
        indexer: &indexer,
        ops: &ops,
        stores: &stores,
        config: &config,
        tx: &tx,
    };
    // The cached rows' effects (the selected session's pane) go out with everything else.
    effects.carry_out(first_fx, &mut tui);
    crate::keytrace::phase("threads_started", launched);
    let started = Instant::now();
    let mut last_draw = Instant::now() - FRAME;
    // For `keytrace` only: what the last loop turn did, and when.
    let tracing = crate::keytrace::on();
    let mut turn = crate::keytrace::Turn::new(started);
    let mut rows_traced = drawn;
    // Whether any frame is on screen: until one is, no event waits for a frame budget.
    let mut painted = drawn;
    // Whether this turn applied a key or a paste, and the events that came during a
    // preview wait (handled first by the next turn).
    let mut keyed = false;
    let mut carried: Vec<Event> = Vec::new();
    let mut tidy = tidy::Tidy::default();
    loop {
        app.now = Utc::now();
        wake_pending.store(false, Ordering::SeqCst);
        // The matcher's new results can move the selection, and the pane must then load it:
        // a tick's effects are carried out like any other action's.
        let fx = app.update(Action::Tick);
        effects.carry_out(fx, &mut tui);
        // A key that moved the selection: its frame waits a moment for the preview, so the
        // key is drawn once, settled (anything else arriving ends the wait).
        if keyed && app.pane.loading {
            let t0 = Instant::now();
            let until = t0 + preview_wait::PREVIEW_WAIT;
            preview_wait::await_preview(&mut app, &rx, until, &mut carried, |fx| {
                effects.carry_out(fx, &mut tui)
            });
            if tracing {
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                turn.applied.push(("preview_wait", ms));
            }
        }
        keyed = false;
        if tracing {
            turn.ticked = Instant::now();
        }
        if turn.woke == started {
            crate::keytrace::phase("loop_tick", launched);
        }
        if app.quit {
            break;
        }
        // Never a frame of "0 sessions" before any row is known: the first frame waits for
        // the first rows (or for every store to finish, or a moment, for an empty store).
        let loaded = !app.progress.is_empty() && app.progress.iter().all(|p| p.finished);
        if app.list.total_rows() > 0 || loaded || started.elapsed() >= FIRST_FRAME_WAIT {
            // A cold start's first rows: the listing goes on meanwhile, and holds
            // (`tui::ack::hold`) until the terminal has read them.
            let ask = !rows_traced && app.list.total_rows() > 0;
            let draw = |f: &mut ratatui::Frame| ui::draw(f, &mut app, &theme);
            if ask {
                tui.draw_and_ask(draw)
            } else {
                tui.draw(draw)
            }
            .wrap_err("could not draw")?;
            crate::keytrace::drawn(&turn);
            painted = true;
            if turn.woke == started {
                crate::keytrace::phase("loop_frame", launched);
            }
            // A cold start's first rows arrive some loop turns in: trace when they show.
            if !rows_traced && app.list.total_rows() > 0 {
                crate::keytrace::phase("rows_frame", launched);
                rows_traced = true;
            }
            // Once rows are on screen they hold still: the selection stays on its session
            // while later rows stream in above it.
            app.list.shown();
        }
        last_draw = last_draw.max(Instant::now());

        // Block for the first event, then keep the frame budget while draining the rest.
        // Wake up when the status message expires, so the key hints come back on time.
        let until_expiry = app
            .status_deadline()
            .map(|t| (t - Utc::now()).to_std().unwrap_or(Duration::ZERO))
            .map(|d| d + Duration::from_millis(20));
        let timeout = until_expiry.map_or(IDLE, |d| d.min(IDLE));
        let mut events: Vec<Event> = std::mem::take(&mut carried);
        if events.is_empty() {
            match rx.recv_timeout(timeout) {
                Ok(e) => events.push(e),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let woke = Instant::now();
        // A key among them (one typed during a preview wait) is drawn at once.
        let since = painted.then(|| last_draw.elapsed());
        let wait = (events.iter().map(|e| frame_wait(Some(e), since)).min())
            .unwrap_or_else(|| frame_wait(None, since));
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        events.extend(rx.try_iter());
        last_draw = Instant::now();
        if tracing {
            turn = crate::keytrace::Turn::new(woke);
            turn.drained = last_draw;
        }

        for e in events {
            keyed |= matches!(e, Event::Input(Term::Key(_) | Term::Paste(_)));
            let t0 = tracing.then(|| (e.kind(), Instant::now()));
            let actions = match e {
                Event::OpFinished(outcome) => {
                    // The outcome carries the re-read rows of what the operation changed;
                    // a rescan lists new files (a fork, an undone delete).
                    loader.poke();
                    // A rename or archive changes what the index holds for that session.
                    let rows: Vec<Arc<SessionSummary>> =
                        outcome.rows.iter().cloned().map(Arc::new).collect();
                    effects.indexer.reindex(&rows);
                    // A delete leaves the index now, not at the next full pass.
                    effects.indexer.remove(&outcome.removed);
                    vec![Action::OpDone(outcome)]
                }
                e => to_actions(&app, e),
            };
            for a in &actions {
                // Sessions re-read while spool runs: only these are indexed again.
                match a {
                    Action::Cached(rows) | Action::Reread { rows, .. } => {
                        effects.indexer.reindex(rows)
                    }
                    Action::Prepared(h) => h.batch(|rows| effects.indexer.reindex(rows)),
                    Action::Rows(rows) if effects.indexer.started() => {
                        let rows: Vec<Arc<SessionSummary>> =
                            rows.iter().cloned().map(Arc::new).collect();
                        effects.indexer.reindex(&rows)
                    }
                    Action::Removed(keys) => effects.indexer.remove(keys),
                    _ => {}
                }
            }
            for action in actions {
                let fx = app.update(action);
                effects.carry_out(fx, &mut tui);
            }
            if let Some((k, t0)) = t0 {
                turn.applied.push((k, t0.elapsed().as_secs_f64() * 1e3));
            }
            if app.quit {
                break;
            }
        }
        if app.quit {
            break;
        }
        turn.updated = Instant::now();
        // Once the listing has streamed in, the index catches up with it in the background,
        // and the stores are tidied a while later (`tidy::TIDY_AFTER`).
        let loaded =
            |app: &App| !app.progress.is_empty() && app.progress.iter().all(|p| p.finished);
        if !indexer.started() && loaded(&app) {
            indexer.index_all(app.list.shared_rows());
        }
        if !tidy.started() && loaded(&app) {
            tidy.in_background(&stores, tidy::TIDY_AFTER);
        }
    }
    drop(tui);
    tidy.at_quit(&stores);
    Ok(())
}

/// Wait for the terminal to acknowledge the first frame (at once if none was drawn).
fn terminal_read(ack: &crate::tui::ack::Ack, launched: Instant) {
    let how = ack.wait();
    crate::keytrace::phase(&format!("terminal_{how:?}"), launched);
}

/// Map one event to actions. The only place key kinds are filtered (presses only).
fn to_actions(app: &App, e: Event) -> Vec<Action> {
    match e {
        Event::Action(a) => vec![a],
        Event::Wake | Event::OpFinished(_) => Vec::new(),
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

/// How long the run loop waits, after waking on `first`, before it drains the queue and
/// draws: the rest of the frame budget, so a burst of background events (rows, progress,
/// the matcher's wakes) becomes one frame. A key or a paste is answered at once: waiting out
/// the budget after a progress frame added up to 16 ms to keys typed while the index built
/// (`SPOOL_KEYTRACE`: `budget_sleep 16.6` on the slowest keys). Keys already queued behind
/// it are still drained into the same frame.
///
/// `since_draw` is `None` while no frame is on screen: a cold start's loop turns (the
/// stores' progress) draw nothing until the first rows come, and the rows then waited out
/// the budget counted from the last such turn (`SPOOL_KEYTRACE` at 100k sessions:
/// `budget_sleep 16.96` on the rows' frame, 79 ms after launch). The first frame is what
/// the user waits for, and there is no earlier frame to space it from.
fn frame_wait(first: Option<&Event>, since_draw: Option<Duration>) -> Duration {
    use crossterm::event::Event as Term;
    match (first, since_draw) {
        (Some(Event::Input(Term::Key(_) | Term::Paste(_))), _) | (_, None) => Duration::ZERO,
        (_, Some(since)) => FRAME.saturating_sub(since),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn a_key_is_drawn_at_once_background_events_wait_for_the_frame_budget() {
        let key = Event::Input(crossterm::event::Event::Key(KeyEvent::new(
            KeyCode::Char('f'),
            KeyModifiers::NONE,
        )));
        let paste = Event::Input(crossterm::event::Event::Paste("x".into()));
        let just_drawn = Some(Duration::from_millis(1));
        assert_eq!(frame_wait(Some(&key), just_drawn), Duration::ZERO);
        assert_eq!(frame_wait(Some(&paste), just_drawn), Duration::ZERO);
        assert_eq!(
            frame_wait(Some(&Event::Wake), just_drawn),
            FRAME - Duration::from_millis(1)
        );
        assert_eq!(
            frame_wait(None, just_drawn),
            FRAME - Duration::from_millis(1)
        );
        assert_eq!(
            frame_wait(Some(&Event::Wake), Some(FRAME * 2)),
            Duration::ZERO
        );
    }

    #[test]
    fn before_any_frame_nothing_waits_for_a_frame_budget() {
        // A cold start's first rows, after turns that drew nothing: drawn at once.
        let rows = Event::Action(Action::Cached(Vec::new()));
        assert_eq!(frame_wait(Some(&rows), None), Duration::ZERO);
        assert_eq!(frame_wait(Some(&Event::Wake), None), Duration::ZERO);
        assert_eq!(frame_wait(None, None), Duration::ZERO);
    }
}
