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
    pub(super) fn register(&mut self, dir: &Path, _parent: Option<Handle>) -> Reg {
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
