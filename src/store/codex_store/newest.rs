//! A cold start's first screen of Codex rollouts without an `lstat` of each of them (issue
//! 10). Discovery orders every rollout by mtime, so the first rows waited for 10k `statx`
//! calls (about half the CPU before the first rows at 10k). A rollout's name holds the time
//! it was created (`rollout-YYYY-MM-DDThh-mm-ss-<uuid>`), so the newest names are listed
//! from a walk of names alone (of the newest day directories: `days`), and only they are
//! stat'ed and ordered by mtime. A rollout created earlier but written later (a resumed
//! session) is not among them: the full discovery that follows finds it and the list
//! inserts it above, as for any row that arrives late.

use super::discover::{Entry, Found};

/// Of `all` (one walk's entries, kept one per id, without their `lstat`), the `n` newest by
/// mtime among the `2n` newest by the time in their names, each with its `lstat`, in
/// `discover`'s order. Rollouts only: a warning row (a legacy `.json`, a segmented
/// directory) comes with the full discovery.
pub fn newest(all: &[Entry], n: usize) -> Vec<Entry> {
    // Each name found once: `Path::file_name` in the comparisons parsed 10k paths thrice.
    let mut named: Vec<(&[u8], &Entry)> = (all.iter())
        .filter(|e| e.found == Found::Rollout)
        .map(|e| (name(e), e))
        .collect();
    let keep = (2 * n).min(named.len());
    if keep < named.len() {
        named.select_nth_unstable_by(keep, |a, b| b.0.cmp(a.0));
        named.truncate(keep);
    }
    let mut out: Vec<Entry> = (named.into_iter())
        .filter_map(|(_, e)| {
            // Not followed, as discovery's `DirEntry::metadata`; a rollout gone since the
            // walk is left to the full discovery.
            let meta = std::fs::symlink_metadata(&e.path).ok()?;
            Some(Entry {
                mtime: meta.modified().ok(),
                stat: Some(crate::catalog::stamp::Stat::of(&meta)),
                ..e.clone()
            })
        })
        .collect();
    out.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.id.cmp(&a.id)));
    out.truncate(n);
    out
}

/// A rollout's file name (the path's bytes after its last `/`, as discovery built it): they
/// start with the same prefix and then the time, so the newest sorts last in byte order.
fn name(e: &Entry) -> &[u8] {
    let p = e.path.as_os_str().as_encoded_bytes();
    p.rsplit(|&b| b == b'/').next().unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use super::super::discover;
    use std::time::{Duration, SystemTime};

    /// The first screen is discovery's first `n` (id, path, mtime, `lstat`) when the newest
    /// rollouts by mtime are among the newest names: also when a newer name has an older
    /// mtime (ordered by mtime), with a `.zst` beside a plain rollout (the plain one) and an
    /// archived copy (the active one), and with legacy `.json` debris left out.
    #[test]
    fn the_first_screen_is_discoverys_first_rows() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_772_323_200);
        let put = |rel: String, secs: u64| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let f = std::fs::File::create(&path).unwrap();
            f.set_modified(t0 + Duration::from_secs(secs)).unwrap();
        };
        let name = |n: u64| {
            let (day, hour) = (n / 10 + 1, n % 10);
            let id = format!("019ceba0-ae55-7d10-9f2a-{n:012x}");
            (
                format!("2026/03/{day:02}"),
                format!("rollout-2026-03-{day:02}T{hour:02}-00-00-{id}"),
            )
        };
        for n in 0..60 {
            let (day, stem) = name(n);
            // Rollout 58 was last written before 55 to 57: it sorts below them.
            let mtime = if n == 58 { 54 * 3600 + 1 } else { n * 3600 };
            put(format!("sessions/{day}/{stem}.jsonl"), mtime);
        }
        let (day, stem) = name(59);
        put(format!("sessions/{day}/{stem}.jsonl.zst"), 99 * 3600);
        put(format!("archived_sessions/{stem}.jsonl"), 99 * 3600);
        let (day, stem) = name(70);
        put(format!("sessions/{day}/{stem}.json"), 99 * 3600);
        let all = super::super::days::newest_named(root, usize::MAX);
        assert!(all.iter().all(|e| e.mtime.is_none() && e.stat.is_none()));
        let full = discover::discover(root);
        let seen = |v: &[discover::Entry]| -> Vec<_> {
            (v.iter())
                .map(|e| (e.id.clone(), e.path.clone(), e.mtime, e.stat))
                .collect()
        };
        for n in [0, 1, 5, 8, 20] {
            let got = super::newest(&all, n);
            // The legacy `.json` (newest of all by mtime) comes with the full discovery.
            let want: Vec<_> = (full.iter())
                .filter(|e| e.found == discover::Found::Rollout)
                .take(n)
                .cloned()
                .collect();
            assert_eq!(seen(&got), seen(&want), "n = {n}");
        }
        let fifth = &super::newest(&all, 8)[4].path;
        assert!(fifth.ends_with(name(58).1 + ".jsonl"), "{fifth:?}");
    }
}
