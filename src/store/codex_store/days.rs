//! A cold start's first screen of Codex rollouts from the newest day directories alone
//! (issue 10). Rollouts live in `sessions/YYYY/MM/DD/`, named after the local time they
//! were created, so the newest names are in the newest days: listing every day directory
//! (68 at 10k rollouts, about 13 ms of CPU) to find a screenful that one or two of them
//! hold was most of the first screen's discovery. A fork's parent in an older day is found
//! from the time in its UUIDv7 id, not by a walk of every day.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use chrono::{Datelike, Local, TimeZone};

use super::discover::{self, Entry, Step};
use crate::store::dirents::{self, Kind};

/// The rollouts named by a walk of `sessions/` whose day directories are listed newest
/// first (by their `YYYY/MM/DD` names) until `want` rollouts are named, and by a walk of
/// `archived_sessions/` (flat) for those that may be among them or share their ids (which
/// decide the archive flags): `archive_near`. No rollout is `lstat`ed. Kept one per id by discovery's rules, from the entries in the full walk's
/// order: an id whose copies all lie in the walked directories keeps the copy discovery
/// keeps. A day directory that is a symlink is not walked, as in discovery.
pub fn newest_named(root: &Path, want: usize) -> Vec<Entry> {
    let plan = discover::plan(root, false);
    // Rollouts above the day directories (the legacy flat layout) are named already.
    let mut named = (plan.iter())
        .filter(|s| matches!(s, Step::Found(..)))
        .count();
    let later: Vec<(&Path, usize, bool)> = (plan.iter())
        .filter_map(|s| match s {
            Step::Later(dir, depth, archived) => Some((dir.as_path(), *depth, *archived)),
            Step::Found(..) => None,
        })
        .collect();
    let mut walked: Vec<Option<Vec<Step>>> = later.iter().map(|_| None).collect();
    // `plan` names the archive last.
    let Some((&(archive, depth, archived), days)) = later.split_last() else {
        return Vec::new();
    };
    let mut newest_first: Vec<usize> = (0..days.len()).collect();
    // Same root and depth: the paths compare as their year, month and day names do.
    newest_first.sort_unstable_by(|a, b| days[*b].0.cmp(days[*a].0));
    let mut left = days.len();
    for i in newest_first {
        if named >= want {
            break;
        }
        let (dir, depth, archived) = days[i];
        let out = discover::walk_later(dir, depth, archived, false);
        named += out.len();
        walked[i] = Some(out);
        left -= 1;
    }
    let last = walked.len() - 1;
    walked[last] = Some(if left == 0 {
        // Every day walked: the whole archive, as discovery walks it.
        discover::walk_later(archive, depth, archived, false)
    } else {
        let (since, ids) = near(plan.iter().chain(walked.iter().flatten().flatten()));
        archive_near(archive, since.as_deref(), &ids)
    });
    drop(later);
    discover::keep_one_each(discover::fill(plan, walked))
}

/// A rollout's id as it sits in a name or an entry (36 bytes, lowercase, as discovery's).
type Id = [u8; 36];

/// The oldest time named by `steps` (the 19 bytes after `rollout-`) and their ids.
fn near<'a>(steps: impl Iterator<Item = &'a Step>) -> (Option<Vec<u8>>, HashSet<Id>) {
    let (mut since, mut ids): (Option<&[u8]>, HashSet<Id>) = (None, HashSet::new());
    for s in steps {
        let Step::Found(e, _) = s else { continue };
        let name = e.path.file_name().map_or(&[][..], |n| n.as_bytes());
        if let Some(t) = name.get(8..27) {
            since = Some(since.map_or(t, |s| s.min(t)));
        }
        ids.extend(Id::try_from(e.id.as_bytes()).ok());
    }
    (since.map(<[u8]>::to_vec), ids)
}

/// What a walk of `archive` (flat, nothing stat'ed) names that a first screen from the
/// newest days needs: the rollouts named at `since` or later, and those of `ids` (an
/// active rollout's archived copy decides which one discovery keeps, and its flag). One
/// named before every rollout walked is not among the newest names. A 100k store's archive
/// held 7.7k rollouts, and naming each was most of the first screen's CPU (issue 10).
fn archive_near(archive: &Path, since: Option<&[u8]>, ids: &HashSet<Id>) -> Vec<Step> {
    let mut out = Vec::new();
    let _ = dirents::each(archive, |name, kind| {
        let late = (name.get(8..27).zip(since)).is_some_and(|(t, s)| t >= s);
        let known = || {
            let id = name.get(28..64).and_then(|b| Id::try_from(b).ok());
            id.is_some_and(|mut id| {
                id.make_ascii_lowercase();
                ids.contains(&id)
            })
        };
        if !(late || known()) || name.starts_with(b".") {
            return;
        }
        // As discovery's walk at depth 0: a directory is a rollout's only by its name, and
        // neither a symlink nor a device is one.
        let is_dir = match kind {
            Kind::File => false,
            Kind::Dir => true,
            Kind::Symlink | Kind::Other => return,
        };
        // A name that is not UTF-8 names no rollout (discovery's lossy copy parses as none).
        let Ok(text) = std::str::from_utf8(name) else {
            return;
        };
        let Some((id, found, zst)) = discover::classify(text, is_dir) else {
            return;
        };
        let entry = Entry {
            id,
            path: crate::store::fanout::path_of(archive, OsStr::from_bytes(name)),
            mtime: None,
            stat: None,
            archived: true,
            found,
            duplicate_in_archive: false,
        };
        out.push(Step::Found(entry, zst));
    });
    out
}

/// The day directories the rollout of `id` may lie in: the first 48 bits of a UUIDv7 are
/// its creation in milliseconds since the epoch, and Codex names the rollout's day
/// directory after that moment in local time. The day before and after too (the name's
/// clock and the id's may straddle midnight). Empty for an id that is not a UUIDv7.
fn days_of(root: &Path, id: &str) -> Vec<PathBuf> {
    let b = id.as_bytes();
    if !super::is_uuid(id) || b[14] != b'7' {
        return Vec::new();
    }
    let Ok(ms) = i64::from_str_radix(&format!("{}{}", &id[..8], &id[9..13]), 16) else {
        return Vec::new();
    };
    let Some(day) = Local.timestamp_millis_opt(ms).earliest() else {
        return Vec::new();
    };
    let day = day.date_naive();
    [Some(day), day.pred_opt(), day.succ_opt()]
        .into_iter()
        .flatten()
        .map(|d| {
            let (y, m, d) = (d.year(), d.month(), d.day());
            root.join(format!("sessions/{y:04}/{m:02}/{d:02}"))
        })
        .collect()
}

/// Whether `day` (`<root>/sessions/YYYY/MM/DD`) would be walked by discovery: the year,
/// month and day are directories, none of them a symlink (discovery does not follow one).
fn walked_by_discovery(day: &Path) -> bool {
    let mut p = day;
    for _ in 0..3 {
        let real_dir = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
        let hidden = p
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes()[0] == b'.');
        if !real_dir || hidden {
            return false;
        }
        let Some(up) = p.parent() else { return false };
        p = up;
    }
    true
}

/// The rollout of `id` (lowercase) in the day directories its UUIDv7 id names and in the
/// archive, walked and kept as discovery walks and keeps them: plain over `.zst`, active
/// over archived, and an active one's archived copy setting its `duplicate_in_archive`.
/// `None` when it is in neither. A copy elsewhere (the legacy flat layout, a day its id
/// does not name) is not looked for: the caller walks the whole store when this misses.
pub fn placed(root: &Path, id: &str) -> Option<Entry> {
    let mut found = Vec::new();
    for day in days_of(root, id) {
        if walked_by_discovery(&day) {
            found.extend(discover::walk_later(&day, 1, false, false));
        }
    }
    // The archive comes after every day in discovery's walk, as here.
    let ids = HashSet::from([Id::try_from(id.as_bytes()).ok()?]);
    found.extend(archive_near(&root.join("archived_sessions"), None, &ids));
    let found = (found.into_iter())
        .filter_map(|s| match s {
            Step::Found(e, zst) if e.id == id => Some((e, zst)),
            _ => None,
        })
        .collect();
    (discover::keep_one_each(found).into_iter()).find(|e| e.found == discover::Found::Rollout)
}

#[cfg(test)]
#[path = "days_tests.rs"]
mod tests;
