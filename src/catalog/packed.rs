//! A store's survey held compactly while it waits for its stat pass: each candidate's id
//! and file name in one shared byte string, its directory as an index into the few
//! directories the store's sessions live in, and its mtime. Issue 10: the browser surveys
//! every store while the catalog decodes, so at 100k sessions three stores' candidates
//! (136 bytes inline each, plus an id and a whole path on the heap: about 280 bytes) sat
//! on top of every decoded row until the checks ended, where a warm start's memory peaked.
//! Packed, a candidate is about 70 bytes, and only a session read again is rebuilt whole.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustc_hash::FxHashMap;

use super::stamp::Stat;
use super::survey::Survey;
use crate::store::Candidate;

/// What a stat pass reads of its candidates, by position: a survey as discovery gave it
/// (`[Candidate]`, the CLI's) or `Packed` (the browser's).
pub trait Listed: Sync {
    /// How many candidates there are.
    fn count(&self) -> usize;
    fn id(&self, i: usize) -> &str;
    /// Candidate `i`'s path, built in `buf` where it is not held whole.
    fn path<'a>(&'a self, i: usize, buf: &'a mut PathBuf) -> &'a Path;
    /// `f` of candidate `i` itself (to read its session again).
    fn with<R>(&self, i: usize, f: impl FnOnce(&Candidate) -> R) -> R;
}

impl Listed for [Candidate] {
    fn count(&self) -> usize {
        self.len()
    }
    fn id(&self, i: usize) -> &str {
        &self[i].id
    }
    fn path<'a>(&'a self, i: usize, _: &'a mut PathBuf) -> &'a Path {
        &self[i].path
    }
    fn with<R>(&self, i: usize, f: impl FnOnce(&Candidate) -> R) -> R {
        f(&self[i])
    }
}

/// In `Spot::dir`: the path is the directory itself (no name: a path `Path::join` would not
/// give back byte for byte, such as one with a trailing slash).
const WHOLE: u32 = 1 << 31;
/// In `Spot::dir`: the file name is the id (a Loop session's directory), not stored twice.
const SAME: u32 = 1 << 30;
/// In `Spot::dir`: the file name is the id and `EXT` (a Claude Code transcript), and only
/// the id is stored. Issue 10: at 100k Claude Code sessions the names were 4.2 MB of the
/// packed survey, held beside every decoded row until the check ended.
const JSONL: u32 = 1 << 29;
/// With `SAME`: the name is a prefix, the id and then `EXT` if `JSONL` (a Codex rollout,
/// `rollout-<time>-<id>.jsonl`), and only the id and the prefix are stored. Issue 10: at
/// 100k rollouts the ids held twice were 4 MB of the survey at a warm start's peak.
const PREFIX: u32 = 1 << 28;
const FLAGS: u32 = WHOLE | SAME | JSONL | PREFIX;
/// What a `JSONL` name adds to its id.
const EXT: &str = ".jsonl";

/// Where one candidate's bytes end in `Packed::text`, and its directory.
#[derive(Clone, Copy, Debug)]
struct Spot {
    id_end: u32,
    name_end: u32,
    dir: u32,
}

/// Discovery's candidates, packed, and the key of each one (`Survey::keys`).
#[derive(Debug, Default)]
pub struct Packed {
    dirs: Vec<PathBuf>,
    text: Vec<u8>,
    spots: Vec<Spot>,
    mtimes: Vec<Option<SystemTime>>,
    pub keys: Vec<u64>,
}

impl Packed {
    /// `s` packed. Each candidate is freed as it is packed; the stats discovery took are
    /// dropped (the keys were taken from them, and a session read again is stat'ed anew).
    pub fn of(s: Survey) -> Packed {
        let Survey { candidates, keys } = s;
        let (mut p, _) = Packed::pack(candidates);
        p.keys = keys;
        p
    }

    /// `candidates` packed before they are keyed (`survey::packed`), with the stats
    /// discovery took at the same index (empty where it took none: they are what keying
    /// needs of the candidates beyond the packed bytes).
    pub fn pack(candidates: Vec<Candidate>) -> (Packed, Vec<Option<Stat>>) {
        let room = (candidates.iter()).map(|c| room(&c.id, &c.path)).sum();
        let stats = candidates.iter().any(|c| c.stat.is_some());
        Packed::pack_each(candidates.len(), room, stats, candidates)
    }

    /// `n` candidates packed one by one as `candidates` makes them, so they are never all
    /// held whole (a store's own discovery, `Store::discover_packed`); `room` is the sum of
    /// their `room`s, and `stats` whether any carries one.
    pub fn pack_each(
        n: usize,
        room: usize,
        stats: bool,
        candidates: impl IntoIterator<Item = Candidate>,
    ) -> (Packed, Vec<Option<Stat>>) {
        // Room for every id and every name part that is not its id, so the text is
        // allocated once: grown as it filled, its copies were a tenth of packing a
        // 33k-session store.
        let mut kept = Vec::new();
        if stats {
            kept.reserve_exact(n);
        }
        let mut p = Packed {
            dirs: Vec::new(),
            text: Vec::with_capacity(room),
            spots: Vec::with_capacity(n),
            mtimes: Vec::with_capacity(n),
            keys: Vec::new(),
        };
        // By bytes: `Path`'s own equality takes `/s/.` for `/s`, and the two join a name
        // into different paths.
        let mut index: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
        for c in candidates {
            if stats {
                kept.push(c.stat);
            }
            p.push(c, &mut index);
        }
        p.text.shrink_to_fit();
        p.spots.shrink_to_fit();
        p.mtimes.shrink_to_fit();
        p.dirs.shrink_to_fit();
        (p, kept)
    }

    /// Surveys packed apart (a directory's each, on discovery's threads) joined end to end
    /// in their order, each freed as it is taken in, with their stats (`None` for the
    /// candidates of a piece that carries none). Issue 10: each directory's candidates
    /// packed where they were listed are never all held whole at once.
    pub fn join(pieces: Vec<(Packed, Vec<Option<Stat>>)>) -> (Packed, Vec<Option<Stat>>) {
        // Allocated once, at its final size: grown as it filled, the joined survey's spare
        // room was as large as its pieces (a large vector is a mapping of its own, `heap`,
        // so the room is not resident until it is written, and the pieces are freed as it
        // is).
        let n: usize = pieces.iter().map(|(p, _)| p.count()).sum();
        let mut all = Packed {
            dirs: Vec::new(),
            text: Vec::with_capacity(pieces.iter().map(|(p, _)| p.text.len()).sum()),
            spots: Vec::with_capacity(n),
            mtimes: Vec::with_capacity(n),
            keys: Vec::new(),
        };
        let mut stats: Vec<Option<Stat>> = Vec::new();
        if pieces.iter().any(|(_, s)| !s.is_empty()) {
            stats.reserve_exact(n);
        }
        let mut index: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
        for (p, their_stats) in pieces {
            let base = u32::try_from(all.text.len()).expect("a survey's text under 4 GiB");
            // Each of the piece's directories as the joined survey numbers it.
            let dirs: Vec<u32> = (p.dirs.iter())
                .map(|d| {
                    let bytes = d.as_os_str().as_bytes();
                    *index.entry(bytes.into()).or_insert_with(|| {
                        all.dirs.push(d.clone());
                        all.dirs.len() as u32 - 1
                    })
                })
                .collect();
            all.text.extend_from_slice(&p.text);
            all.spots.extend(p.spots.iter().map(|s| Spot {
                id_end: base + s.id_end,
                name_end: base + s.name_end,
                dir: dirs[(s.dir & !FLAGS) as usize] | (s.dir & FLAGS),
            }));
            if !their_stats.is_empty() {
                stats.resize(all.mtimes.len(), None);
                stats.extend(their_stats);
            }
            all.mtimes.extend_from_slice(&p.mtimes);
        }
        if !stats.is_empty() {
            stats.resize(all.mtimes.len(), None);
        }
        all.text.shrink_to_fit();
        all.spots.shrink_to_fit();
        all.mtimes.shrink_to_fit();
        stats.shrink_to_fit();
        (all, stats)
    }

    /// Candidate `i` written into `c`, reusing its buffers (keying a packed survey builds
    /// no candidate a session); its `stat` is left `None`.
    pub fn fill(&self, i: usize, c: &mut Candidate) {
        c.id.clear();
        c.id.push_str(self.id(i));
        c.path.as_mut_os_string().clear();
        c.path
            .push(&self.dirs[(self.spots[i].dir & !FLAGS) as usize]);
        if let Some([first, rest @ ..]) = self.name(i) {
            c.path.push(first);
            rest.iter().for_each(|p| c.path.as_mut_os_string().push(p));
        }
        c.mtime = self.mtimes[i];
        c.stat = None;
    }

    fn push(&mut self, c: Candidate, index: &mut FxHashMap<Box<[u8]>, u32>) {
        let mut dir_of = |d: &Path, dirs: &mut Vec<PathBuf>| -> u32 {
            // Most candidates share the last one's directory.
            if let Some(last) = dirs.last()
                && last.as_os_str() == d.as_os_str()
            {
                return dirs.len() as u32 - 1;
            }
            *index
                .entry(d.as_os_str().as_bytes().into())
                .or_insert_with(|| {
                    dirs.push(d.to_path_buf());
                    dirs.len() as u32 - 1
                })
        };
        self.text.extend_from_slice(c.id.as_bytes());
        let id_end = self.text.len() as u32;
        let dir = match split(&c.path) {
            Some((d, name)) => {
                let i = dir_of(d, &mut self.dirs);
                let (stem, ext) = match name.as_bytes().strip_suffix(EXT.as_bytes()) {
                    Some(stem) => (stem, JSONL),
                    None => (name.as_bytes(), 0),
                };
                match stem.strip_suffix(c.id.as_bytes()) {
                    Some([]) => i | SAME | ext,
                    Some(prefix) if !c.id.is_empty() => {
                        self.text.extend_from_slice(prefix);
                        i | SAME | PREFIX | ext
                    }
                    _ => {
                        self.text.extend_from_slice(name.as_bytes());
                        i
                    }
                }
            }
            None => dir_of(&c.path, &mut self.dirs) | WHOLE,
        };
        self.spots.push(Spot {
            id_end,
            name_end: self.text.len() as u32,
            dir,
        });
        self.mtimes.push(c.mtime);
    }

    fn start(&self, i: usize) -> usize {
        i.checked_sub(1)
            .map_or(0, |j| self.spots[j].name_end as usize)
    }

    /// Candidate `i`'s file name in the parts it is stored as: what comes before the id
    /// (or the whole name), the id when the name holds it, and `EXT` or nothing.
    fn name(&self, i: usize) -> Option<[&OsStr; 3]> {
        let s = self.spots[i];
        if s.dir & WHOLE != 0 {
            return None;
        }
        let part = |from: usize, to: usize| OsStr::from_bytes(&self.text[from..to]);
        let ext = OsStr::new(if s.dir & JSONL != 0 { EXT } else { "" });
        let id = part(self.start(i), s.id_end as usize);
        let own = part(s.id_end as usize, s.name_end as usize);
        Some(match s.dir & (SAME | PREFIX) {
            0 => [own, OsStr::new(""), ext],
            SAME => [id, OsStr::new(""), ext],
            _ => [own, id, ext],
        })
    }

    /// Candidate `i`'s mtime as discovery gave it.
    pub fn mtime(&self, i: usize) -> Option<SystemTime> {
        self.mtimes[i]
    }

    /// The heap bytes it holds (tests bound them).
    pub fn bytes(&self) -> usize {
        self.text.capacity()
            + self.spots.capacity() * std::mem::size_of::<Spot>()
            + self.mtimes.capacity() * std::mem::size_of::<Option<SystemTime>>()
            + self.keys.capacity() * 8
            + (self.dirs.iter()).map(|d| d.capacity() + 24).sum::<usize>()
    }
}

/// What candidate `id` at `path` may store in a survey's text at most (its id, and its
/// name), for `Packed::pack_each`'s room.
pub fn room(id: &str, path: &Path) -> usize {
    id.len() + split(path).map_or(0, |(_, n)| n.len())
}

/// `path` as a directory and a name that `Path::push` joins back to the same bytes: cut at
/// its last separator, by bytes. `None` where the join would not give the path back (no
/// separator, a root, a trailing or doubled separator, a `.` or `..` name), which is then
/// held whole. `parent`, `file_name` and a trial `join` did this by parsing the path's
/// components and allocating the joined path, for each of a store's sessions (issue 10).
fn split(path: &Path) -> Option<(&Path, &OsStr)> {
    let b = path.as_os_str().as_bytes();
    let cut = b.iter().rposition(|&c| c == b'/')?;
    let (dir, name) = (&b[..cut], &b[cut + 1..]);
    let plain_name = !name.is_empty() && name != b"." && name != b"..";
    // `push` adds one separator after a directory that does not end in one (a doubled one
    // would come back single); an empty directory (the path was `/name`) is the root.
    let joins = dir.is_empty() || !dir.ends_with(b"/");
    let dir = if dir.is_empty() { &b[..1] } else { dir };
    (plain_name && joins).then(|| (Path::new(OsStr::from_bytes(dir)), OsStr::from_bytes(name)))
}

impl Listed for Packed {
    fn count(&self) -> usize {
        self.spots.len()
    }

    fn id(&self, i: usize) -> &str {
        let bytes = &self.text[self.start(i)..self.spots[i].id_end as usize];
        // Packed from a `String`, cut at its own ends.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    fn path<'a>(&'a self, i: usize, buf: &'a mut PathBuf) -> &'a Path {
        let dir = &self.dirs[(self.spots[i].dir & !FLAGS) as usize];
        let Some([first, rest @ ..]) = self.name(i) else {
            return dir;
        };
        buf.as_mut_os_string().clear();
        buf.push(dir);
        buf.push(first);
        rest.iter().for_each(|p| buf.as_mut_os_string().push(p));
        buf
    }

    fn with<R>(&self, i: usize, f: impl FnOnce(&Candidate) -> R) -> R {
        let mut buf = PathBuf::new();
        let path = self.path(i, &mut buf).to_path_buf();
        f(&Candidate {
            id: self.id(i).to_string(),
            path,
            mtime: self.mtimes[i],
            stat: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, path: &str, mtime: Option<u64>) -> Candidate {
        Candidate {
            id: id.into(),
            path: path.into(),
            mtime: mtime.map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s)),
            stat: None,
        }
    }

    /// Every candidate comes back as it went in, byte for byte: a name that is its id, one
    /// that is not, several directories in any order, a trailing slash, a root, a non-UTF-8
    /// name, an empty id.
    #[test]
    fn a_packed_candidate_comes_back_as_it_went_in() {
        let bad = OsStr::from_bytes(b"/s/\xffname.jsonl").to_os_string();
        let mut cs = vec![
            c("a1", "/s/loop/a1", Some(5)),
            c("a2", "/s/loop/a2", None),
            c("b", "/p/one/b.jsonl", Some(7)),
            c("a3", "/s/loop/a3", Some(9)),
            c("d", "/p/two/d.jsonl", None),
            c("e", "/p/one/sub/", None),
            c("f", "/", None),
            c("", "/s/loop/x", None),
            c("g", "rel/g", None),
            c("i", "//i", None),
            c("j", "/s//j", None),
            c("k", "/s/./k", None),
            c("l", "/s/l/.", None),
            c("m", "/s/l/..", None),
            c("n", "/n", None),
            c("o", "o", None),
            c("q", "/p/one/q.jsonl.jsonl", None),
            c("r.jsonl", "/p/one/r.jsonl", None),
            c("", "/p/two/.jsonl", None),
            c("t", "/p/two/t.json", None),
            c("u", "/p/two/rollout-1-u.jsonl", None),
            c("v", "/p/two/xv", None),
            c("w.jsonl", "/p/two/aw.jsonl.jsonl", None),
            c("yy", "/p/two/y.jsonl", None),
        ];
        cs.push(Candidate {
            id: "h".into(),
            path: bad.into(),
            mtime: None,
            stat: None,
        });
        let keys: Vec<u64> = (0..cs.len() as u64).collect();
        let p = Packed::of(Survey {
            candidates: cs.clone(),
            keys: keys.clone(),
        });
        assert_eq!(p.count(), cs.len());
        assert_eq!(p.keys, keys);
        let mut buf = PathBuf::new();
        for (i, want) in cs.iter().enumerate() {
            assert_eq!(p.id(i), want.id);
            assert_eq!(
                p.path(i, &mut buf).as_os_str().as_bytes(),
                want.path.as_os_str().as_bytes(),
                "{i}"
            );
            p.with(i, |got| {
                assert_eq!(
                    (&got.id, got.path.as_os_str(), got.mtime),
                    (&want.id, want.path.as_os_str(), want.mtime)
                );
            });
        }
        assert_eq!(p.dirs.len(), 13, "one entry per directory: {:?}", p.dirs);
    }

    /// Claude Code's transcripts are named by their id and `.jsonl`: only the ids are
    /// stored, and each path comes back whole.
    #[test]
    fn a_transcript_named_by_its_id_stores_only_the_id() {
        let id = |i: u32| format!("{i:08x}-0000-4000-8000-000000000000");
        let cs: Vec<Candidate> = (0..1000)
            .map(|i| {
                c(
                    &id(i),
                    &format!("/h/.claude/projects/-p{}/{}.jsonl", i % 7, id(i)),
                    None,
                )
            })
            .collect();
        let (p, _) = Packed::pack(cs.clone());
        assert_eq!(p.text.len(), 1000 * 36, "the ids alone");
        let mut buf = PathBuf::new();
        let mut got = Candidate::unreadable_dir(Path::new("/x"));
        for (i, want) in cs.iter().enumerate() {
            assert_eq!(p.path(i, &mut buf), want.path, "{i}");
            p.fill(i, &mut got);
            assert_eq!((&got.id, &got.path), (&want.id, &want.path), "{i}");
        }
    }

    /// Codex's rollouts are named `rollout-<time>-<id>.jsonl`: each id is stored once,
    /// with what comes before it, and each path comes back whole.
    #[test]
    fn a_rollout_named_with_its_id_stores_the_id_once() {
        let id = |i: u32| format!("019c{i:04x}-0000-7000-8000-000000000000");
        let name = |i: u32| format!("rollout-2026-03-14T10-15-{:02}-{}.jsonl", i % 60, id(i));
        let cs: Vec<Candidate> = (0..1000)
            .map(|i| {
                c(
                    &id(i),
                    &format!("/h/.codex/sessions/2026/03/{}/{}", i % 9, name(i)),
                    None,
                )
            })
            .collect();
        let (p, _) = Packed::pack(cs.clone());
        assert_eq!(p.text.len(), 1000 * (36 + 28), "the ids and the prefixes");
        let mut buf = PathBuf::new();
        let mut got = Candidate::unreadable_dir(Path::new("/x"));
        for (i, want) in cs.iter().enumerate() {
            assert_eq!(p.path(i, &mut buf), want.path, "{i}");
            p.fill(i, &mut got);
            assert_eq!((&got.id, &got.path), (&want.id, &want.path), "{i}");
        }
    }

    /// Surveys packed apart and joined are the survey packed whole: every candidate, its
    /// path and its stat come back, a directory shared by two pieces held once, a piece
    /// without stats among pieces with them.
    #[test]
    fn pieces_joined_are_the_whole_packed() {
        let st = |n: u64| Some(Stat::from_fields([n; 8]));
        let mut cs = vec![
            c("a", "/p/one/a.jsonl", Some(1)),
            c("b", "/p/one/rollout-1-b.jsonl", None),
            c("x", "/p/two/y", Some(2)),
            c("d", "/p/one/d", None),
            c("e", "/", None),
            c("f", "/p/two/f.jsonl", Some(3)),
        ];
        for (i, cand) in cs.iter_mut().enumerate() {
            cand.stat = if i == 2 || i == 3 { None } else { st(i as u64) };
        }
        let pieces = [&cs[0..2], &cs[2..4], &cs[4..4], &cs[4..]];
        let (joined, stats) = Packed::join(
            (pieces.iter())
                .map(|p| {
                    let (packed, stats) = Packed::pack(p.to_vec());
                    // A piece whose candidates carry no stat hands back none.
                    assert_eq!(stats.is_empty(), p.iter().all(|c| c.stat.is_none()));
                    (packed, stats)
                })
                .collect(),
        );
        let (whole, whole_stats) = Packed::pack(cs.clone());
        assert_eq!(stats, whole_stats);
        assert_eq!(joined.count(), cs.len());
        assert_eq!(joined.dirs, whole.dirs);
        let (mut a, mut b) = (PathBuf::new(), PathBuf::new());
        for (i, want) in cs.iter().enumerate() {
            assert_eq!(joined.id(i), want.id, "{i}");
            assert_eq!(joined.path(i, &mut a), want.path, "{i}");
            assert_eq!(joined.path(i, &mut a), whole.path(i, &mut b), "{i}");
            joined.with(i, |got| assert_eq!(got.mtime, want.mtime, "{i}"));
        }
        assert_eq!(joined.text, whole.text);
    }

    /// A Loop-like store of 10k sessions in one directory: its packed survey is a fraction
    /// of discovery's (136 bytes inline a candidate, plus its id and path on the heap).
    #[test]
    fn a_packed_survey_is_small() {
        let dir = "/home/someone/.local/share/loop/sessions";
        let cs: Vec<Candidate> = (0..10_000)
            .map(|i| {
                let id = format!("{i:08x}-0000-4000-8000-000000000000");
                c(&id, &format!("{dir}/{id}"), Some(i))
            })
            .collect();
        let keys = vec![0; cs.len()];
        let p = Packed::of(Survey {
            candidates: cs,
            keys,
        });
        let per = p.bytes() / 10_000;
        assert!(per <= 72, "{per} bytes a candidate");
    }

    /// The browser's warm check over a packed survey finds what `spool list`'s check over
    /// discovery's candidates finds, after every kind of change: a log appended to, one
    /// removed, a new one, one left alone.
    #[test]
    fn a_check_over_a_packed_survey_equals_one_over_the_candidates() {
        use std::io::Write;

        use crate::catalog::pass::{self, ById, Checked};
        use crate::store::Store;
        use crate::store::loom_store::LoomStore;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loom");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(fixture.join("sessions")).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
            }
        }
        let store = LoomStore::new(tmp.path());
        let before = store.discover();
        assert!(before.len() >= 3);
        let metas: Vec<_> = before.iter().map(|c| pass::read(&store, c).meta).collect();
        // Appended to, removed, and a new log; the rest left alone.
        let first = &before[0].path;
        let log = std::fs::read(first).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(first)
            .unwrap()
            .write_all(&log)
            .unwrap();
        std::fs::remove_file(&before[1].path).unwrap();
        std::fs::copy(&before[2].path, dir.join("20260315-101010.jsonl")).unwrap();
        let seen = |c: Checked| {
            let mut fresh: Vec<_> = c.fresh.iter().map(|e| e.meta.clone()).collect();
            fresh.sort_by(|a, b| a.id.cmp(&b.id));
            let mut known: Vec<_> = (c.known.keys())
                .map(|id| (id.to_string(), *c.known.get(id).unwrap()))
                .collect();
            known.sort_by(|a, b| a.0.cmp(&b.0));
            let (mut changed, mut gone) = (c.changed, c.gone);
            changed.sort();
            gone.sort();
            (fresh, known, changed, gone)
        };
        let plain = seen(pass::check(
            &store,
            ById::new(metas.clone()),
            &store.discover_unordered(),
        ));
        let packed = Packed::of(crate::catalog::survey::survey(&store));
        let from_packed = seen(pass::check_packed(&store, ById::new(metas), &packed));
        assert_eq!(from_packed, plain);
        // The changes were seen: one changed, one gone, one new, and every log known.
        let (fresh, known, changed, gone) = plain;
        assert_eq!(changed, [before[0].id.to_string()]);
        assert_eq!(gone, [before[1].id.to_string()]);
        assert_eq!(fresh.len(), 2, "{fresh:?}");
        assert_eq!(known.len(), before.len());
    }
}
