//! A store's file watch elsewhere than Linux: the `notify` crate, one watch per directory
//! (Linux uses inotify directly, `inotify.rs`, for its memory at 100k sessions).

use std::path::Path;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use notify::{RecursiveMode, Watcher};

use super::{Hits, Reg};

/// notify names directories by path: there is nothing to pass from a parent.
pub(super) type Handle = ();

pub(super) struct Backend(notify::RecommendedWatcher);

impl Backend {
    /// A watcher that adds what events name to `hits` and pokes the store's loader.
    pub(super) fn new(hits: Arc<Mutex<Hits>>, poke: Sender<()>) -> Option<Backend> {
        let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
            if let Ok(ev) = r {
                // Reads (ours included) raise access events; reacting to them would re-read
                // in a loop. Only creation, change and removal matter.
                if matches!(ev.kind, notify::EventKind::Access(_)) {
                    return;
                }
                if let Ok(mut h) = hits.lock() {
                    // Events were dropped (the kernel's queue overflowed): a full rescan.
                    h.lost |= ev.need_rescan();
                    h.paths.extend(ev.paths);
                }
                let _ = poke.send(());
            }
        });
        watcher.ok().map(Backend)
    }

    /// One directory, without its subdirectories.
    /// The first walk is over (nothing is held for it here).
    pub(super) fn settle(&self) {}

    pub(super) fn register(&mut self, dir: &Path, _parent: Option<Handle>) -> Reg<Handle> {
        match self.0.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => Reg::Done {
                handle: (),
                new: true,
            },
            Err(e) => match e.kind {
                notify::ErrorKind::PathNotFound => Reg::Gone,
                // notify stats the directory after registering it: removed in between.
                notify::ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::NotFound => {
                    Reg::Gone
                }
                _ => Reg::Failed,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    /// A registered directory's new file is named to the store and pokes its loader; a
    /// directory that is not there is `Gone`, as the walk expects.
    #[test]
    fn a_file_made_in_a_registered_directory_is_named_and_pokes() {
        let d = tempfile::tempdir().unwrap();
        let hits = Arc::new(Mutex::new(Hits::default()));
        let (tx, rx) = mpsc::channel();
        let mut b = Backend::new(hits.clone(), tx).expect("a watcher");
        assert!(matches!(
            b.register(d.path(), None),
            Reg::Done { new: true, .. }
        ));
        assert!(matches!(
            b.register(&d.path().join("absent"), None),
            Reg::Gone
        ));
        // The walk is over: the watch goes on as it was.
        b.settle();
        let f = d.path().join("s.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let mut poked = false;
        while !hits.lock().unwrap().paths.contains(&f) {
            assert!(Instant::now() < until, "no event named {f:?}");
            poked |= rx.recv_timeout(Duration::from_millis(50)).is_ok();
        }
        poked |= rx.recv_timeout(Duration::from_secs(1)).is_ok();
        assert!(poked, "the loader was not poked");
    }
}
