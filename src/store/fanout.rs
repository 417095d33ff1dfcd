//! Discovery's directory listings on two threads, gathered in the order one thread would
//! have listed them. Issue 10: a warm `spool list` of 10k Codex rollouts or pi sessions was
//! one thread's discovery (a `getdents64` per directory, a `statx` per session) with the
//! other core idle, and the order matters to what Codex's discovery keeps (the first of two
//! equal rollouts in walk order wins), so the listings are merged by position, not as they
//! finish. And each session's path is built at its final size.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `work` of every item, results in the items' order, on this thread and one more (the
/// machine this was measured on has two cores, and Claude's discovery uses as many). An
/// item whose thread could not start or stopped partway (a panic) is done again here: a
/// session left out would be taken for deleted.
pub fn in_order<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < 2 {
        return items.iter().map(&work).collect();
    }
    let next = AtomicUsize::new(0);
    // Each result goes with its item's position, whichever thread took it.
    let tagged = || {
        let mut got = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return got;
            };
            got.push((i, work(item)));
        }
    };
    let (mine, theirs) = std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("spool-discover".into())
            .spawn_scoped(scope, tagged);
        let mine = tagged();
        let theirs = other.ok().and_then(|h| h.join().ok());
        (mine, theirs.unwrap_or_default())
    });
    let mut slots: Vec<Option<R>> = items.iter().map(|_| None).collect();
    for (i, r) in mine.into_iter().chain(theirs) {
        slots[i] = Some(r);
    }
    (slots.into_iter().zip(items))
        .map(|(r, item)| r.unwrap_or_else(|| work(item)))
        .collect()
}

/// `dir.join(name)` (what `DirEntry::path` gives for an entry listed from `dir`) built at
/// its final size: `join` copies `dir` and then grows the copy for the name, a `realloc`
/// per session (10k in a warm list, some of them waiting on the allocator's lock while
/// both discovery threads ran), and the path kept up to twice the bytes it needs.
pub fn path_of(dir: &Path, name: &OsStr) -> PathBuf {
    path_of_stem(dir, name, "")
}

/// `dir/<stem><suffix>` (loom's `sessions/<id>.jsonl`), built at its final size like
/// `path_of`, without first building the name.
pub fn path_of_stem(dir: &Path, stem: impl AsRef<OsStr>, suffix: &str) -> PathBuf {
    let stem = stem.as_ref();
    let mut p = PathBuf::with_capacity(dir.as_os_str().len() + 1 + stem.len() + suffix.len());
    p.push(dir);
    p.push(stem);
    p.as_mut_os_string().push(suffix);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path is `join`'s, with no spare room.
    #[test]
    fn a_path_is_joins_at_its_final_size() {
        for (dir, name) in [
            ("/a/b", "c.jsonl"),
            ("/a/b/", "c"),
            ("rel", "x"),
            ("/", "y"),
        ] {
            let (dir, name) = (Path::new(dir), OsStr::new(name));
            let p = path_of(dir, name);
            assert_eq!(p, dir.join(name));
            assert!(p.capacity() <= dir.as_os_str().len() + 1 + name.len());
        }
    }

    /// A stem and suffix give the same path as the whole name, at its final size.
    #[test]
    fn a_stem_and_suffix_are_the_whole_names_path() {
        for (dir, stem) in [
            ("/a/sessions", "20260101-000000-ab"),
            ("/", "x"),
            ("d/", "y"),
        ] {
            let dir = Path::new(dir);
            let p = path_of_stem(dir, stem, ".jsonl");
            assert_eq!(p, dir.join(format!("{stem}.jsonl")));
            assert!(p.capacity() <= dir.as_os_str().len() + 1 + stem.len() + 6);
        }
    }

    /// Items done on both threads, interleaved, come back in the items' order, each once.
    #[test]
    fn results_come_in_the_items_order() {
        let items: Vec<u64> = (0..200).collect();
        let work = |&n: &u64| (0..(n % 7) * 5_000).fold(n, |h, k| h.wrapping_mul(31) ^ k);
        let want: Vec<u64> = items.iter().map(work).collect();
        // This thread holds its first item until the other has taken a few, which then
        // holds its fourth until this one has done three: they interleave (each wait gives
        // up after a while, should the other thread never start).
        let (mine, theirs) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let wait = |count: &AtomicUsize, n: usize| {
            for _ in 0..1_000_000 {
                if count.load(Ordering::SeqCst) >= n {
                    break;
                }
                std::thread::yield_now();
            }
        };
        let got = in_order(&items, |n| {
            if std::thread::current().name() == Some("spool-discover") {
                if theirs.fetch_add(1, Ordering::SeqCst) == 3 {
                    wait(&mine, 3);
                }
            } else {
                if *n == 0 {
                    wait(&theirs, 3);
                }
                mine.fetch_add(1, Ordering::SeqCst);
            }
            work(n)
        });
        assert_eq!(got, want);
        assert_eq!(in_order(&items[..1], work), want[..1]);
        assert!(in_order(&items[..0], work).is_empty());
    }

    /// The other thread stops at the first item it takes: that item is done again on this
    /// one, and nothing is missing.
    #[test]
    fn an_item_the_other_thread_dropped_is_done_here() {
        use std::sync::atomic::AtomicBool;
        let items: Vec<usize> = (0..64).collect();
        let dropped = AtomicBool::new(false);
        let got = in_order(&items, |&n| {
            if std::thread::current().name() == Some("spool-discover") {
                dropped.store(true, Ordering::SeqCst);
                panic!("the other thread stops");
            }
            // This thread waits a while for the other to take an item, so that the redo
            // is what the test sees (it passes either way when the other never starts).
            for _ in 0..1_000_000 {
                if dropped.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::yield_now();
            }
            n * 2
        });
        assert_eq!(got, (0..64).map(|n| n * 2).collect::<Vec<_>>());
    }
}
