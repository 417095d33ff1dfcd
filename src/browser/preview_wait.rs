//! One frame per keystroke (issue 10 item 4): after a key moves the selection, the frame
//! waits a moment for the pane's preview of the new session, so the key's screen is drawn
//! once, settled, instead of the list first and the preview a frame later.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::app::{Action, App, Effect};
use crate::loader::Event;

/// The longest a key's frame waits for the preview. A preview is a page from a session's
/// end, read in a few ms; one that takes longer (a huge file, a cold disk) is drawn when it
/// comes, as before, and the key's frame waits no more than this for it.
pub(super) const PREVIEW_WAIT: Duration = Duration::from_millis(12);

/// While the pane is loading and `until` has not passed, take the loader's answers from
/// `rx` and apply them (their effects go to `carry_out`). Anything else that arrives is
/// pushed onto `later`, for the next loop turn to handle first; input also ends the wait,
/// so a key typed meanwhile is never held back for a preview. Background news (progress,
/// the matcher's wake-ups) does not: at a start it comes every few ms.
pub(super) fn await_preview(
    app: &mut App,
    rx: &Receiver<Event>,
    until: Instant,
    later: &mut Vec<Event>,
    mut carry_out: impl FnMut(Vec<Effect>),
) {
    while app.pane.loading {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Event::Action(a @ Action::Loaded { .. })) => {
                let fx = app.update(a);
                carry_out(fx);
            }
            Ok(e) => {
                let input = matches!(e, Event::Input(_));
                later.push(e);
                if input {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{Loaded, Options};
    use crate::model::{SessionSummary, StoreKind};
    use std::sync::mpsc;

    /// An app whose pane asked for the top session, and the token it asked with.
    fn loading_app() -> (App, u64) {
        let mut app = App::new(Options::new(chrono::Utc::now()));
        app.update(Action::Resize(120, 30));
        let mut s = SessionSummary::new(StoreKind::Loom, "a", "/a");
        s.has_user_message = true;
        let fx = app.update(Action::Rows(vec![s]));
        assert!(fx.iter().any(|f| matches!(f, Effect::Load { .. })));
        assert!(app.pane.loading);
        let token = app.pane.token;
        (app, token)
    }

    fn loaded(token: u64) -> Event {
        Event::Action(Action::Loaded {
            token,
            content: Loaded::Failed("gone".into()),
        })
    }

    #[test]
    fn a_preview_that_comes_in_time_is_in_the_same_frame() {
        let (mut app, token) = loading_app();
        let (tx, rx) = mpsc::channel();
        // A stale answer, then background news: the wait goes on for the current answer,
        // and keeps the news for the next turn.
        tx.send(loaded(token - 1)).unwrap();
        tx.send(Event::Wake).unwrap();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2));
            tx.send(loaded(token)).unwrap();
        });
        let until = Instant::now() + Duration::from_secs(5);
        let mut later = Vec::new();
        await_preview(&mut app, &rx, until, &mut later, |_| {});
        late.join().unwrap();
        assert!(matches!(later[..], [Event::Wake]), "kept, not dropped");
        assert!(
            !app.pane.loading,
            "the frame after the wait shows the preview"
        );
    }

    #[test]
    fn a_key_or_the_deadline_ends_the_wait() {
        let (mut app, _) = loading_app();
        let (tx, rx) = mpsc::channel();
        let mut later = Vec::new();
        let t = Instant::now();
        await_preview(
            &mut app,
            &rx,
            t + Duration::from_millis(5),
            &mut later,
            |_| {},
        );
        assert!(t.elapsed() < Duration::from_secs(1));
        assert!(app.pane.loading && later.is_empty());
        let key = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('x'));
        tx.send(Event::Input(crossterm::event::Event::Key(key)))
            .unwrap();
        let (until, t) = (Instant::now() + Duration::from_secs(5), Instant::now());
        await_preview(&mut app, &rx, until, &mut later, |_| {});
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "a key ends the wait at once"
        );
        assert!(
            matches!(later[..], [Event::Input(_)]),
            "handed back, not dropped"
        );
        assert!(app.pane.loading);
    }
}
