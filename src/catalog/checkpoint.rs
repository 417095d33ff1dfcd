//! A cold pass's reads kept as it goes. A cold pass writes its store's section once it has
//! read every session; a Claude Code store of 100k transcripts takes over a minute to read
//! (each is parsed whole for its counts), and a user who quit before the end lost it all:
//! the next start was cold again, and so was every start after it that ended early. Now
//! what the pass has read is added to the catalog every so often, so a later start lists
//! those sessions warm and reads only the rest (its stat pass finds them new).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::Entry;
use crate::model::StoreKind;

/// The first checkpoint comes this long into a pass: a store read within it (all but the
/// largest) is written once, at its end, as before.
const FIRST_AFTER: Duration = Duration::from_secs(5);
/// Each checkpoint rewrites the catalog (its cost grows with what was read), so the next
/// waits this many times as long as the last one took: at most a twentieth of the pass.
const COST_FACTOR: u32 = 20;

/// Tests' first delay in milliseconds (`u64::MAX`: `FIRST_AFTER`).
static FIRST_AFTER_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Tests: every cold pass started from now on checkpoints its first read at once (the
/// loader's own wiring is tested by stopping a pass part-way).
#[doc(hidden)]
pub fn first_at_once_for_tests() {
    FIRST_AFTER_MS.store(0, Ordering::Relaxed);
}

/// When a cold pass's next checkpoint is due, and where it goes.
pub struct Checkpoint {
    cache: Option<PathBuf>,
    kind: StoreKind,
    dir: PathBuf,
    due: Instant,
}

impl Checkpoint {
    /// For the pass over the store `kind` at `dir`; `cache` is where its catalog lives
    /// (`None`: no catalog, nothing kept).
    pub fn new(cache: Option<&Path>, kind: StoreKind, dir: &Path) -> Checkpoint {
        let after = match FIRST_AFTER_MS.load(Ordering::Relaxed) {
            u64::MAX => FIRST_AFTER,
            ms => Duration::from_millis(ms),
        };
        Self::first_after(cache, kind, dir, after)
    }

    /// The same with the first checkpoint `after` the start (tests: at once).
    pub fn first_after(
        cache: Option<&Path>,
        kind: StoreKind,
        dir: &Path,
        after: Duration,
    ) -> Checkpoint {
        Checkpoint {
            cache: cache.map(Path::to_path_buf),
            kind,
            dir: dir.to_path_buf(),
            due: Instant::now() + after,
        }
    }

    /// The pass has read `read` so far: when a checkpoint is due, put all of it in the
    /// store's section (entries already there for other ids stay, as the patch log's records
    /// do). Nothing is copied between checkpoints: a pass that ends before the first (all
    /// but the largest stores) pays one clock read a session.
    pub fn read<'a>(&mut self, read: impl ExactSizeIterator<Item = &'a Entry>) {
        let Some(cache) = &self.cache else {
            return;
        };
        let now = Instant::now();
        if now < self.due {
            return;
        }
        // The rows are shared with the list; a clone is the metas.
        let fresh: Vec<Entry> = read.cloned().collect();
        let change = super::Change::Apply {
            fresh: &fresh,
            gone: &[],
        };
        super::patch(cache, self.kind, &self.dir, change);
        self.due = Instant::now() + (Instant::now() - now) * COST_FACTOR;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, Meta, Section, load, save};

    fn entry(id: &str) -> Entry {
        Entry {
            meta: Meta {
                id: id.into(),
                path: format!("/p/{id}.jsonl").into(),
                key: 1,
                cwd: None,
                cwd_dir: false,
                expires: None,
            },
            row: None,
        }
    }

    fn ids(cache: &Path) -> Vec<String> {
        let cat = load(cache).expect("a catalog");
        let s = cat.sections.iter().find(|s| s.kind == StoreKind::Claude);
        s.map(|s| s.entries.iter().map(|e| e.meta.id.clone()).collect())
            .unwrap_or_default()
    }

    /// Each read is in the catalog once a checkpoint is due; another store's section and
    /// this store's earlier entries are kept.
    #[test]
    fn what_a_pass_read_is_in_the_catalog_at_each_checkpoint() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, dir) = (tmp.path().join("cache"), tmp.path().join("projects"));
        std::fs::create_dir_all(&dir).unwrap();
        let other = Section {
            kind: StoreKind::Loom,
            dir: tmp.path().to_path_buf(),
            entries: vec![entry("loom-1")],
        };
        save(
            &cache,
            &Catalog {
                sections: vec![other],
            },
        )
        .unwrap();
        let mut c = Checkpoint::first_after(Some(&cache), StoreKind::Claude, &dir, Duration::ZERO);
        let mut read = vec![entry("a")];
        c.read(read.iter());
        assert_eq!(ids(&cache), ["a"]);
        // The next is due a multiple of the first's cost later; not wait for it here.
        assert!(c.due > Instant::now());
        c.due = Instant::now();
        read.push(entry("b"));
        c.read(read.iter());
        let mut got = ids(&cache);
        got.sort();
        assert_eq!(got, ["a", "b"]);
        let cat = load(&cache).unwrap();
        assert!(cat.sections.iter().any(|s| s.kind == StoreKind::Loom));
    }

    /// Before the first checkpoint is due nothing is written (a store read within it is
    /// written once, by the pass's end), and without a cache nothing ever is.
    #[test]
    fn nothing_is_written_before_the_first_checkpoint_or_without_a_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let dir = tmp.path();
        let mut c = Checkpoint::first_after(Some(&cache), StoreKind::Claude, dir, FIRST_AFTER);
        c.read([entry("a")].iter());
        assert!(load(&cache).is_none());
        let mut none = Checkpoint::first_after(None, StoreKind::Claude, dir, Duration::ZERO);
        none.read([entry("a")].iter());
        assert!(!cache.exists());
    }
}
