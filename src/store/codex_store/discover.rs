//! Discovery (codex.md section 1): the Codex home, `sessions/` (dated `YYYY/MM/DD` and the
//! legacy flat layout, depth ≤ 4) and `archived_sessions/` (flat), rollout file names, the
//! plain file winning over its `.zst` sibling, active winning over an archived duplicate, and
//! the debris that becomes a warning row (pre-JSONL `.json` files, segmented directories).
//! Only directories are listed here; nothing is read or created.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};

use super::record::is_uuid;
use crate::catalog::stamp::Stat;
use crate::store::Candidate;

/// `$CODEX_HOME` when set and non-empty (a leading `~/` expanded), else `~/.codex`.
pub fn default_root(home: &Path) -> PathBuf {
    crate::store::root_from_env("CODEX_HOME", home, ".codex")
}

/// What a discovered entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Rollout,
    /// A pre-JSONL `rollout-*.json` single file (early 2025).
    LegacyJson,
    /// A directory named like a rollout (segmented layout of unconfirmed origin).
    Segmented,
}

/// One discovered rollout (or warning entry).
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: String,
    pub path: PathBuf,
    pub mtime: Option<SystemTime>,
    /// Discovery's `lstat` of `path` (taken for `mtime`), handed to the catalog's stat pass
    /// so a warm check does not `lstat` every rollout a second time. `None` when the entry
    /// comes from the kept index (`found::ById`), which does not hold it.
    pub stat: Option<crate::catalog::stamp::Stat>,
    pub archived: bool,
    pub found: Found,
    /// The same id also sits in `archived_sessions/` (an interrupted archive).
    pub duplicate_in_archive: bool,
}

/// The id and local creation time of `rollout-YYYY-MM-DDThh-mm-ss-<uuid>` (no extension).
pub fn parse_stem(stem: &str) -> Option<(String, NaiveDateTime)> {
    let rest = stem.strip_prefix("rollout-")?;
    if rest.len() != 19 + 1 + 36 || !rest.is_char_boundary(19) {
        return None;
    }
    let (time, id) = (&rest[..19], &rest[20..]);
    if rest.as_bytes()[19] != b'-' || !is_uuid(id) {
        return None;
    }
    let t = strict_time(time)
        .or_else(|| NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H-%M-%S").ok())?;
    Some((id.to_ascii_lowercase(), t))
}

/// `YYYY-MM-DDThh-mm-ss` with every digit in place and a valid date and time, read by hand:
/// chrono's format parser was the largest part of naming 10k rollouts (a warm check names
/// every one). Anything else (a leap second, a name chrono's looser parser may still take)
/// returns `None` and goes to chrono, so what is accepted, and as what, is unchanged.
fn strict_time(t: &str) -> Option<NaiveDateTime> {
    let b = t.as_bytes();
    if b.len() != 19 || [b[4], b[7], b[10], b[13], b[16]] != *b"--T--" {
        return None;
    }
    let num = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0u32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let date = chrono::NaiveDate::from_ymd_opt(num(0, 4)? as i32, num(5, 7)?, num(8, 10)?)?;
    date.and_hms_opt(num(11, 13)?, num(14, 16)?, num(17, 19)?)
}

/// The filename time, read as the machine's local time (DECIDED; Codex reads it as UTC).
pub fn filename_time(path: &Path) -> Option<DateTime<Utc>> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let stem = name
        .strip_suffix(".jsonl.zst")
        .or_else(|| name.strip_suffix(".jsonl"))?;
    let (_, t) = parse_stem(stem)?;
    Local
        .from_local_datetime(&t)
        .earliest()
        .map(|l| l.with_timezone(&Utc))
}

/// Classify one directory entry by name.
pub(super) fn classify(name: &str, is_dir: bool) -> Option<(String, Found, bool)> {
    if is_dir {
        return parse_stem(name).map(|(id, _)| (id, Found::Segmented, false));
    }
    if let Some(stem) = name.strip_suffix(".jsonl.zst") {
        return parse_stem(stem).map(|(id, _)| (id, Found::Rollout, true));
    }
    if let Some(stem) = name.strip_suffix(".jsonl") {
        return parse_stem(stem).map(|(id, _)| (id, Found::Rollout, false));
    }
    let stem = name.strip_suffix(".json")?;
    parse_stem(stem).map(|(id, _)| (id, Found::LegacyJson, false))
}

/// One step of a walk, in walk order: a rollout entry (and whether it is a `.zst`), or a
/// directory whose own walk was left for later (its depth left, archived).
pub(super) enum Step {
    Found(Entry, bool),
    Later(PathBuf, usize, bool),
}

/// The depth left of the directories a walk of `sessions/` leaves for later: the day
/// directories of `YYYY/MM/DD`, which hold the rollouts (68 of them at 10k rollouts).
const LATER_AT: usize = 1;

/// How a walk lists a directory: where it goes, and whether it takes each entry's `lstat`.
#[derive(Clone, Copy)]
pub(super) struct Walk {
    pub(super) archived: bool,
    /// A subdirectory whose depth left would be this is not walked but named in its place.
    pub(super) later: Option<usize>,
    /// Take each rollout's `lstat` (its mtime, the catalog's key). Without, the walk lists
    /// names only: a cold start's first screen picks its rollouts by the time in their names
    /// (see `newest`), and a `statx` of all 10k was most of its discovery.
    pub(super) stat: bool,
}

/// Walk `dir` to `depth_left` levels of subdirectories, collecting rollout entries.
///
/// Names come from `dirents::each` (no allocation per entry) and each rollout's `lstat` from
/// the directory's own handle (`at::Dirs`): at 100k rollouts std's `read_dir` and
/// `DirEntry::metadata` (a `statx` looked up from `/` through every directory above) were
/// most of the warm survey's 273 ms of CPU (issue 10).
pub(super) fn walk(dir: &Path, depth_left: usize, how: Walk, out: &mut Vec<Step>) {
    use crate::store::dirents::{self, Kind};
    let Walk {
        archived, later, ..
    } = how;
    let mut at = crate::catalog::at::Dirs::default();
    let dir_bytes = dir.as_os_str().as_bytes();
    // An error listing `dir` is a directory with nothing in it, as before.
    let _ = dirents::each(dir, |raw, kind| {
        let name = String::from_utf8_lossy(raw);
        if name.starts_with('.') {
            return;
        }
        // The entry's own type, never a symlink's target: a linked rollout is not Codex's.
        let is_dir = match kind {
            Kind::Dir => true,
            Kind::File => false,
            Kind::Symlink | Kind::Other => return,
        };
        let os_name = std::ffi::OsStr::from_bytes(raw);
        if is_dir && classify(&name, true).is_none() {
            if let Some(next) = depth_left.checked_sub(1) {
                let sub = dir.join(os_name);
                if later == Some(next) {
                    out.push(Step::Later(sub, next, archived));
                } else {
                    walk(&sub, next, how, out);
                }
            }
            return;
        }
        let Some((id, found, zst)) = classify(&name, is_dir) else {
            return;
        };
        let path = crate::store::fanout::path_of(dir, os_name);
        // The `lstat` the catalog keys on, from the directory's handle; when that fails, the
        // path's own (the stat pass's rule: an error never reads as another file).
        let stat = how.stat.then(|| {
            at.lstat(dir_bytes, raw)
                .or_else(|| (std::fs::symlink_metadata(&path).ok()).map(|m| Stat::of(&m)))
        });
        let stat = stat.flatten();
        let entry = Entry {
            id,
            path,
            mtime: stat.as_ref().and_then(Stat::mtime),
            stat,
            archived,
            found,
            duplicate_in_archive: false,
        };
        out.push(Step::Found(entry, zst));
    });
}

/// The walk of `sessions/` down to its day directories, which are named in their places
/// (`Step::Later`) and not walked, and then `archived_sessions/`, named last.
pub(super) fn plan(root: &Path, stat: bool) -> Vec<Step> {
    let mut plan = Vec::new();
    let how = Walk {
        archived: false,
        later: Some(LATER_AT),
        stat,
    };
    walk(&root.join("sessions"), 4, how, &mut plan);
    plan.push(Step::Later(root.join("archived_sessions"), 0, true));
    plan
}

/// The walk of one directory `plan` left for later (its whole depth).
pub(super) fn walk_later(dir: &Path, depth: usize, archived: bool, stat: bool) -> Vec<Step> {
    let mut out = Vec::new();
    let how = Walk {
        archived,
        later: None,
        stat,
    };
    walk(dir, depth, how, &mut out);
    out
}

/// `plan`'s entries in walk order, each directory it left for later replaced by its walk
/// from `walked` (one item per such directory, in order; `None` leaves it out).
pub(super) fn fill(
    plan: Vec<Step>,
    walked: impl IntoIterator<Item = Option<Vec<Step>>>,
) -> Vec<(Entry, bool)> {
    let walked: Vec<Option<Vec<Step>>> = walked.into_iter().collect();
    // Allocated once: grown as it filled, the copies sat beside the walk's lists.
    let n = plan.len() + walked.iter().flatten().map(Vec::len).sum::<usize>();
    let mut walked = walked.into_iter();
    let found = |s: Step| match s {
        Step::Found(e, zst) => Some((e, zst)),
        // A walk with nothing left for later names no directory.
        Step::Later(..) => None,
    };
    let mut all = Vec::with_capacity(n);
    for step in plan {
        match step {
            Step::Found(e, zst) => all.push((e, zst)),
            Step::Later(..) => all.extend(
                walked
                    .next()
                    .flatten()
                    .into_iter()
                    .flatten()
                    .filter_map(found),
            ),
        }
    }
    all
}

/// Every rollout entry under `root` (and whether it is a `.zst`) in the order one walk of
/// `sessions/` and then `archived_sessions/` lists them. The day directories and the
/// archive are listed on two threads (`fanout`) and put back in their places. With `stat`,
/// each entry carries its `lstat`.
fn walk_all(root: &Path, stat: bool) -> Vec<(Entry, bool)> {
    let plan = plan(root, stat);
    let later: Vec<(&Path, usize, bool)> = (plan.iter())
        .filter_map(|s| match s {
            Step::Later(dir, depth, archived) => Some((dir.as_path(), *depth, *archived)),
            Step::Found(..) => None,
        })
        .collect();
    let walked = crate::store::fanout::in_order(&later, |&(dir, depth, archived)| {
        walk_later(dir, depth, archived, stat)
    });
    fill(plan, walked.into_iter().map(Some))
}

/// Every rollout under `root`, one per id: plain beats `.zst`, active beats archived,
/// newest mtime first.
pub fn discover(root: &Path) -> Vec<Entry> {
    let mut out = discover_unordered(root);
    // Ids are unique, so the order is total and an unstable sort gives the same one.
    out.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.id.cmp(&a.id)));
    out
}

/// `discover` in no particular order, for a caller that orders or keys the entries itself
/// (the catalog's survey, which sorted 10k rollouts by time for nothing).
pub fn discover_unordered(root: &Path) -> Vec<Entry> {
    keep_one_each(walk_all(root, true))
}

/// One entry per id from a walk's entries (in walk order): plain beats `.zst`, active beats
/// archived, and of equals the first in walk order wins.
pub(super) fn keep_one_each(all: Vec<(Entry, bool)>) -> Vec<Entry> {
    let kept = choose(
        all.len(),
        |i| all[i].0.id.as_str(),
        |i| (all[i].0.found, all[i].0.archived, all[i].1),
    );
    // In place: the kept entries stay where they are and the rest are dropped, and the
    // vector becomes one of entries in the same allocation. Issue 10: a second vector of
    // the kept entries beside the walk's (20 MB at 100k rollouts) was a start's peak.
    let mut kept = kept.into_iter();
    let mut all = all;
    all.retain_mut(|(e, _)| match kept.next().flatten() {
        Some(duplicate) => {
            e.duplicate_in_archive = duplicate;
            true
        }
        None => false,
    });
    all.into_iter().map(|(e, _)| e).collect()
}

/// What of a walk's `n` entries (in walk order) discovery keeps, by their ids (`id`) and
/// `what` each is (found as, archived, a `.zst`): one per id, plain beats `.zst`, active
/// beats archived, and of equals the first in walk order wins. Per entry: `None` when left
/// out, else whether its id is also a rollout in the other place (`duplicate_in_archive`).
/// Shared by the walk held as entries (`keep_one_each`) and held packed (`packed_walk`).
pub(super) fn choose<'a>(
    n: usize,
    id: impl Fn(usize) -> &'a str,
    what: impl Fn(usize) -> (Found, bool, bool),
) -> Vec<Option<bool>> {
    let rank = |i: usize| {
        let (found, archived, zst) = what(i);
        let found = match found {
            Found::Rollout => 0,
            Found::LegacyJson | Found::Segmented => 1,
        };
        (found, u8::from(archived), u8::from(zst))
    };
    let mut kept: Vec<Option<bool>> = vec![None; n];
    for group in by_id(n, &id).chunk_by(|&a, &b| id(a) == id(b)) {
        let (mut active, mut archived) = (false, false);
        let mut best = group[0];
        for &i in group {
            let (found, in_archive, _) = what(i);
            if found == Found::Rollout {
                if in_archive {
                    archived = true;
                } else {
                    active = true;
                }
            }
            // The first of the best rank in walk order wins.
            if rank(i) < rank(best) {
                best = i;
            }
        }
        kept[best] = Some(active && archived);
    }
    kept
}

/// The positions `0..n`, the entries of one id (`id`) side by side and in walk order: two
/// hash maps keyed by a copy of each id were a fifth of a warm check's CPU at 10k. Sorted by
/// the id's 128 bits (every id discovery names is a lowercase UUID, so equal bits are equal
/// text), each with its position, which makes the order total: a stable sort by the ids'
/// text, each comparison two scattered strings, was a tenth of a warm check's discovery at
/// 100k rollouts (issue 10). An id that is not a lowercase UUID falls back to that sort.
fn by_id<'a>(n: usize, id: &impl Fn(usize) -> &'a str) -> Vec<usize> {
    let bits = |id: &str| {
        let lower = !id.bytes().any(|c| c.is_ascii_uppercase());
        super::found::key(id).filter(|_| lower)
    };
    let keyed: Option<Vec<([u64; 2], u32)>> = (0..n)
        .map(|i| Some((bits(id(i))?, u32::try_from(i).ok()?)))
        .collect();
    match keyed {
        Some(mut keyed) => {
            keyed.sort_unstable();
            keyed.into_iter().map(|(_, i)| i as usize).collect()
        }
        None => {
            let mut by: Vec<usize> = (0..n).collect();
            by.sort_by(|&a, &b| id(a).cmp(id(b)));
            by
        }
    }
}

/// A candidate takes the entry's id and path without copying them: discovery's entries are
/// dropped once the candidates are made (a copy of each was a twentieth of a warm check).
impl From<Entry> for Candidate {
    fn from(e: Entry) -> Candidate {
        Candidate {
            id: e.id,
            path: e.path,
            mtime: e.mtime,
            stat: e.stat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_plain_beats_zst_and_active_beats_archived() {
        let (id, t) =
            parse_stem("rollout-2026-03-14T10-15-02-019CEBA0-ae55-7d10-9f2a-4b8e6c1d2a30").unwrap();
        assert_eq!(id, "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30");
        assert_eq!(t.to_string(), "2026-03-14 10:15:02");
        assert!(parse_stem("rollout-2026-03-14T10-15-02-nope").is_none());
        let d = tempfile::tempdir().unwrap();
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
        let name = format!("rollout-2026-03-14T10-15-02-{id}");
        let day = d.path().join("sessions/2026/03/14");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::create_dir_all(d.path().join("archived_sessions")).unwrap();
        std::fs::write(day.join(format!("{name}.jsonl")), "").unwrap();
        std::fs::write(day.join(format!("{name}.jsonl.zst")), "").unwrap();
        std::fs::write(d.path().join(format!("archived_sessions/{name}.jsonl")), "").unwrap();
        let found = discover(d.path());
        assert_eq!(found.len(), 1);
        assert!(found[0].path.ends_with(format!("{name}.jsonl")));
        assert!(!found[0].archived && found[0].duplicate_in_archive);
    }

    /// The warm check keys every rollout: discovery's `lstat` goes with the candidate, so
    /// the pass does not take a second one (10k rollouts: 20,000 `statx` before, 10,000 now).
    #[test]
    fn a_candidate_carries_discoverys_lstat_of_its_rollout() {
        let d = tempfile::tempdir().unwrap();
        let id = "019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30";
        let day = d.path().join("sessions/2026/03/14");
        std::fs::create_dir_all(&day).unwrap();
        let path = day.join(format!("rollout-2026-03-14T10-15-02-{id}.jsonl"));
        std::fs::write(&path, "{}\n").unwrap();
        let found = discover(d.path());
        let c = Candidate::from(found[0].clone());
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert_eq!(c.stat, Some(crate::catalog::stamp::Stat::of(&meta)));
        assert_eq!(found[0].mtime, Some(meta.modified().unwrap()));
        // What the walk passes by: a rollout linked in, and a FIFO and a dot file under a
        // rollout's name.
        let other =
            |n: u32| format!("rollout-2026-03-14T10-15-02-019ceba0-ae55-7d10-9f2a-{n:012x}");
        std::os::unix::fs::symlink(&path, day.join(format!("{}.jsonl", other(1)))).unwrap();
        let fifo = std::ffi::CString::new(format!("{}/{}.jsonl", day.display(), other(2)));
        assert_eq!(unsafe { libc::mkfifo(fifo.unwrap().as_ptr(), 0o600) }, 0);
        std::fs::write(day.join(format!(".{}.jsonl", other(3))), "{}\n").unwrap();
        let found = discover(d.path());
        assert_eq!(
            found.iter().map(|e| e.path.clone()).collect::<Vec<_>>(),
            [path]
        );
    }

    /// The walk with the day directories and the archive listed on two threads gives the
    /// entries in the order one walk does: rollouts at every depth, directories between
    /// them, an id in several days (the first in walk order wins), an archived copy.
    #[test]
    fn the_walk_on_two_threads_lists_in_one_walks_order() {
        let d = tempfile::tempdir().unwrap();
        let (root, arch) = (d.path(), d.path().join("archived_sessions"));
        let name = |day: usize, n: usize| {
            let id = format!("019ceba0-ae55-7d10-9f2a-{:012x}", n);
            format!("rollout-2026-03-{:02}T10-15-02-{id}.jsonl", day % 28 + 1)
        };
        std::fs::create_dir_all(&arch).unwrap();
        for day in 0..40 {
            let dir = root.join(format!("sessions/2026/{:02}/{day:02}", day % 3));
            std::fs::create_dir_all(dir.join("deeper")).unwrap();
            for n in 0..(day % 5 + 1) {
                // Ids repeat across days (n % 4): which copy is kept is the walk's order.
                std::fs::write(dir.join(name(day, n % 4 + day % 2 * 10)), "").unwrap();
            }
            std::fs::write(dir.join(format!("deeper/{}", name(day, 99))), "").unwrap();
            std::fs::write(arch.join(name(day, 200 + day % 6)), "").unwrap();
        }
        // Rollouts beside the directories at every level above the days, so that some
        // come after a day directory in the listing's (hash) order.
        for n in 0..12 {
            for dir in ["sessions", "sessions/2026", "sessions/2026/01"] {
                std::fs::write(root.join(dir).join(name(n, 300 + n % 8)), "").unwrap();
            }
        }
        let mut one = Vec::new();
        let how = |archived| Walk {
            archived,
            later: None,
            stat: true,
        };
        walk(&root.join("sessions"), 4, how(false), &mut one);
        walk(&arch, 0, how(true), &mut one);
        let seen = |e: &Entry, zst: bool| (e.id.clone(), e.path.clone(), e.archived, zst);
        let want: Vec<_> = (one.iter())
            .map(|s| match s {
                Step::Found(e, zst) => seen(e, *zst),
                Step::Later(..) => unreachable!("nothing is left for later"),
            })
            .collect();
        let got: Vec<_> = walk_all(root, true)
            .iter()
            .map(|(e, z)| seen(e, *z))
            .collect();
        assert_eq!(want.len(), 192 + 3 * 12);
        assert_eq!(got, want);
        // Names only: the same entries in the same order, kept by the same rules.
        let named: Vec<_> = (walk_all(root, false).iter())
            .map(|(e, z)| seen(e, *z))
            .collect();
        assert_eq!(named, want);
        let kept = |v: Vec<Entry>| -> Vec<_> {
            (v.into_iter())
                .map(|e| (e.id, e.path, e.archived, e.duplicate_in_archive))
                .collect()
        };
        // Every day walked: the names-only walk keeps what discovery keeps.
        let every_day = super::super::days::newest_named(root, usize::MAX);
        assert_eq!(kept(every_day), kept(discover_unordered(root)));
    }

    /// The hand-read time is chrono's on every name it takes, and leaves the rest to chrono.
    #[test]
    fn the_strict_time_reads_as_chrono_does() {
        let chrono = |t: &str| NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H-%M-%S").ok();
        let mut names = vec![
            "2026-03-14T10-15-02".to_string(),
            "0000-01-01T00-00-00".into(),
            "2024-02-29T23-59-59".into(),
            "2023-02-29T10-15-02".into(),
            "2026-13-14T10-15-02".into(),
            "2026-03-14T24-15-02".into(),
            "2026-03-14T10-60-02".into(),
            "2026-03-14T10-15-60".into(),
            "2026-03-14 10-15-02".into(),
            "2026-03-14T10:15:02".into(),
            "+026-03-14T10-15-02".into(),
            "2026-3-14T10-15-002".into(),
            "2026-03-1aT10-15-02".into(),
        ];
        for day in 0..40 {
            for sec in [0, 59, 60, 99] {
                names.push(format!(
                    "2025-{:02}-{day:02}T{:02}-07-{sec:02}",
                    day % 14,
                    day % 26
                ));
            }
        }
        for t in &names {
            if let Some(got) = strict_time(t) {
                assert_eq!(Some(got), chrono(t), "{t}");
            }
        }
        // Valid names take the fast path (it is the one that must agree above).
        assert!(strict_time("2026-03-14T10-15-02").is_some());
        assert!(strict_time("2024-02-29T23-59-59").is_some());
    }

    /// Entries are grouped by id as a stable sort of their ids' text groups them: every
    /// group, each in walk order (lowercase UUIDs by their bits, anything else by text).
    #[test]
    fn entries_are_grouped_by_id_in_walk_order() {
        let entry = |id: String| {
            let path = PathBuf::from(format!("/c/{id}.jsonl"));
            let e = Entry {
                id,
                path,
                mtime: None,
                stat: None,
                archived: false,
                found: Found::Rollout,
                duplicate_in_archive: false,
            };
            (e, false)
        };
        let uuid = |n: usize| format!("019ceba0-ae55-7d10-9f2a-{:012x}", n * 7919 % 500);
        let groups = |all: &[(Entry, bool)], by: Vec<usize>| {
            let mut g: Vec<Vec<usize>> = (by.chunk_by(|&a, &b| all[a].0.id == all[b].0.id))
                .map(<[usize]>::to_vec)
                .collect();
            g.sort();
            g
        };
        let stable = |all: &[(Entry, bool)]| {
            let mut by: Vec<usize> = (0..all.len()).collect();
            by.sort_by(|&a, &b| all[a].0.id.cmp(&all[b].0.id));
            by
        };
        let uuids: Vec<_> = (0..2000).map(|n| entry(uuid(n))).collect();
        // An uppercase twin between lowercase ones (7, 507, 1007, 1507 share an id), and
        // an id that is no UUID.
        let (mut upper, mut odd) = (uuids.clone(), uuids.clone());
        upper[1007] = entry(uuid(1007).to_uppercase());
        odd[9] = entry("not-a-uuid".into());
        for (all, n) in [(uuids, 500), (upper, 501), (odd, 501)] {
            let got = groups(&all, by_id(all.len(), &|i| all[i].0.id.as_str()));
            assert_eq!(got.len(), n);
            assert_eq!(got, groups(&all, stable(&all)));
        }
    }
}
