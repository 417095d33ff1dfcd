//! A cold start's first screen of Claude Code sessions without a `statx` of every transcript
//! (issue 10). Discovery orders every transcript by mtime, so the first rows waited for a
//! `statx` of each (100k of them at 100k sessions: 0.5 s before the first rows). A project
//! directory's mtime changes when a transcript is created in it (not when one is appended
//! to), so the newest projects are where the newest sessions most likely are: only theirs
//! are stat'ed and ordered for the first screen. A session created earlier in an older
//! project and written since is not among them: the full discovery that follows finds it
//! and the list inserts it above, the selection held on its row, as for any row that
//! arrives late.

use std::path::Path;

use super::discover::{list_unstated, newest_first, project_dirs_dated, stamp, stats_in};
use super::seen::{MAX_HANDLES, Projects};
use crate::store::{Candidate, fanout};

/// Transcripts `statx`ed per piece of work on the first screen's two threads.
const CHUNK: usize = 512;

/// Up to `n` transcripts, in discovery's order and each as discovery gives it, from the
/// project directories with the newest mtimes: projects are listed newest first until they
/// hold `n` transcripts, and every project as new as the last one listed is listed too (a
/// file system's clock is coarse: projects written in the same tick are equally likely).
/// What each listed project held goes to `seen`, as from discovery.
///
/// The transcripts are `statx`ed on two threads (`fanout`): the newest project alone held
/// 8,300 of them in a 100k store of 12 projects (about 25 ms of one core's CPU).
pub fn first_screen(projects: &Path, n: usize, seen: &mut Projects) -> Vec<Candidate> {
    let mut dirs = project_dirs_dated(projects);
    // Newest first; by path among equals, so the listing does not depend on the readdir.
    dirs.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut listed = Vec::new();
    let (mut count, mut last) = (0, None);
    for (dir, mtime) in dirs {
        if n == 0 || (count >= n && last != Some(mtime)) {
            break;
        }
        last = Some(mtime);
        let (found, project) = list_unstated(&dir, seen.len() < MAX_HANDLES);
        count += found.len();
        seen.extend(project);
        listed.push((dir, found));
    }
    // Pieces of work: (project, first transcript, end).
    let pieces: Vec<(usize, usize, usize)> = (listed.iter().enumerate())
        .flat_map(|(p, (_, found))| {
            (0..found.len())
                .step_by(CHUNK)
                .map(move |i| (p, i, found.len().min(i + CHUNK)))
        })
        .collect();
    let stats = fanout::in_order(&pieces, |&(p, i, end)| {
        let (dir, found) = &listed[p];
        stats_in(dir, &found[i..end])
    });
    for (&(p, i, end), stats) in pieces.iter().zip(stats) {
        stamp(&mut listed[p].1[i..end], stats);
    }
    let mut out: Vec<Candidate> = listed.into_iter().flat_map(|(_, found)| found).collect();
    out.sort_unstable_by(newest_first);
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn at(s: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_770_000_000 + s)
    }

    /// A transcript with mtime `t` in `dir`.
    fn session(dir: &Path, id: &str, t: u64) {
        let f = std::fs::File::create(dir.join(format!("{id}.jsonl"))).unwrap();
        f.set_modified(at(t)).unwrap();
    }

    /// Set the project directory's mtime (after its transcripts are written).
    fn dated(dir: &Path, t: u64) {
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(at(t))
            .unwrap();
    }

    fn ids(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.id.as_str()).collect()
    }

    /// The newest project alone when it holds a screenful: its newest transcripts, in
    /// discovery's order, each with discovery's stat, and its listing in `seen`; an older
    /// project's transcripts are left for the full discovery, even a newer one (a session
    /// appended to since it was made), which discovery puts first.
    #[test]
    fn the_newest_project_gives_the_first_screen() {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        let (old, new) = (projects.join("-w-old"), projects.join("-w-new"));
        std::fs::create_dir_all(&old).unwrap();
        std::fs::create_dir_all(new.join("n1/subagents")).unwrap();
        session(&old, "appended", 500);
        session(&old, "o1", 10);
        for (i, t) in [(1, 100), (2, 300), (3, 200)] {
            session(&new, &format!("n{i}"), t);
        }
        dated(&old, 50);
        dated(&new, 400);
        let mut seen = Projects::default();
        let got = first_screen(&projects, 2, &mut seen);
        assert_eq!(ids(&got), ["n2", "n3"]);
        let all = crate::store::claude_store::discover::discover(&projects, &mut seen);
        assert_eq!(ids(&all), ["appended", "n2", "n3", "n1", "o1"]);
        for c in &got {
            let d = all.iter().find(|a| a.id == c.id).unwrap();
            assert_eq!((&c.path, c.mtime, &c.stat), (&d.path, d.mtime, &d.stat));
        }
        let mut seen = Projects::default();
        first_screen(&projects, 2, &mut seen);
        assert_eq!(seen.len(), 1);
        assert!(seen.values().next().unwrap().may_hold("n1"));
    }

    /// Projects are listed newest first until they hold `n` transcripts, and those as new
    /// as the last one too; `n` beyond the store gives every transcript, as discovery does.
    #[test]
    fn projects_are_listed_until_a_screenful_and_ties_with_the_last() {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        for (p, t) in [("a", 100), ("b", 300), ("c", 300), ("d", 200)] {
            let dir = projects.join(format!("-w-{p}"));
            std::fs::create_dir_all(&dir).unwrap();
            for s in 0..2 {
                session(&dir, &format!("{p}{s}"), t - 50 + s);
            }
            dated(&dir, t);
        }
        let mut seen = Projects::default();
        // One transcript wanted: b's listing holds it, c is as new as b and is listed too.
        assert_eq!(ids(&first_screen(&projects, 1, &mut seen)), ["c1"]);
        assert_eq!(seen.len(), 2);
        let mut seen = Projects::default();
        let got = first_screen(&projects, 5, &mut seen);
        assert_eq!(ids(&got), ["c1", "b1", "c0", "b0", "d1"]);
        assert_eq!(seen.len(), 3);
        let mut seen = Projects::default();
        let all =
            crate::store::claude_store::discover::discover(&projects, &mut Projects::default());
        let got = first_screen(&projects, 100, &mut seen);
        assert_eq!(ids(&got), ids(&all));
        assert!(first_screen(&projects, 0, &mut seen).is_empty());
    }

    /// A project of more transcripts than one piece of work (`CHUNK`), stat'ed on two
    /// threads: each candidate gets its own `lstat` and mtime, as discovery gives them.
    #[test]
    fn a_big_projects_pieces_keep_each_transcripts_stat() {
        let d = tempfile::tempdir().unwrap();
        let projects = d.path().join("projects");
        let dir = projects.join("-w-big");
        std::fs::create_dir_all(&dir).unwrap();
        let count = 2 * CHUNK + 7;
        for s in 0..count {
            session(&dir, &format!("s{s:04}"), (s * 7919 % count) as u64);
        }
        let all =
            crate::store::claude_store::discover::discover(&projects, &mut Projects::default());
        let got = first_screen(&projects, count, &mut Projects::default());
        assert_eq!(got.len(), count);
        for (g, w) in got.iter().zip(&all) {
            assert_eq!(
                (&g.id, &g.path, g.mtime, &g.stat),
                (&w.id, &w.path, w.mtime, &w.stat)
            );
        }
    }
}
