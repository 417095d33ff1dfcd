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

/// Discovery's candidates, packed, and the key of each one (`Survey::keys`): in parts, as
/// they were packed (a directory's on the thread that walked it), never copied into one.
/// Issue 10: joined into one survey, the copy and the parts' freed room were both resident
/// for a moment, about 10 MB at 100k Codex rollouts, when the warm start's memory peaked.
#[derive(Debug, Default)]
pub struct Packed {
    parts: Vec<Part>,
    /// How many candidates the parts up to and with each one hold.
    ends: Vec<usize>,
    pub keys: Vec<u64>,
}

/// Candidates packed together: their ids and names end to end in one text, where each one
/// ends in it, its directory, and its mtime.
#[derive(Debug, Default)]
struct Part {
    dirs: Vec<PathBuf>,
    text: Vec<u8>,
    spots: Vec<Spot>,
    mtimes: Vec<Option<SystemTime>>,
}

impl Packed {
    /// `s` packed. Each candidate is freed as it is packed; the stats discovery took are
    /// dropped (the keys were taken from them, and a session read again is stat'ed anew).
    pub fn of(s: Survey) -> Packed {
        Packed::with_keys(s.candidates, s.keys)
    }

    /// `candidates` packed before they are keyed (`survey::packed`), with the stats
    /// discovery took at the same index (empty where it took none: they are what keying
    /// needs of the candidates beyond the packed bytes).
    pub fn pack(candidates: Vec<Candidate>) -> (Packed, Vec<Option<Stat>>) {
        let mut stats = Vec::new();
        if candidates.iter().any(|c| c.stat.is_some()) {
            stats.reserve_exact(candidates.len());
        }
        let keep = stats.capacity() > 0;
        let p = Packed::build(candidates, |c| {
            if keep {
                stats.push(c.stat);
            }
        });
        (p, stats)
    }

    /// `candidates` packed, `each` shown each one before it is.
    fn build(candidates: Vec<Candidate>, mut each: impl FnMut(&Candidate)) -> Packed {
        let n = candidates.len();
        // Room for every id and every name part that is not its id, so the text is
        // allocated once: grown as it filled, its copies were a tenth of packing a
        // 33k-session store.
        let room = (candidates.iter()).map(|c| room(&c.id, &c.path)).sum();
        let mut p = Part {
            dirs: Vec::new(),
            text: Vec::with_capacity(room),
            spots: Vec::with_capacity(n),
            mtimes: Vec::with_capacity(n),
        };
        // By bytes: `Path`'s own equality takes `/s/.` for `/s`, and the two join a name
        // into different paths.
        let mut index: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
        for c in candidates {
            each(&c);
            p.push(c, &mut index);
        }
        p.text.shrink_to_fit();
        p.dirs.shrink_to_fit();
        Packed::from_parts(vec![p], Vec::new())
    }

    /// `parts` in order (empty ones left out), and their candidates' `keys`.
    fn from_parts(parts: Vec<Part>, keys: Vec<u64>) -> Packed {
        let mut all = 0;
        let (parts, ends) = (parts.into_iter())
            .filter(|p| !p.spots.is_empty())
            .map(|p| {
                all += p.spots.len();
                (p, all)
            })
            .unzip();
        Packed { parts, ends, keys }
    }

    /// The part candidate `i` is in, and its index there.
    fn at(&self, i: usize) -> (&Part, usize) {
        let k = self.ends.partition_point(|&end| end <= i);
        let before = k.checked_sub(1).map_or(0, |k| self.ends[k]);
        (&self.parts[k], i - before)
    }

    /// `candidates` packed and keyed (`Keyer::keys`) on this thread: a directory's, on the
    /// thread that listed it, for `join`.
    pub fn keyed(candidates: Vec<Candidate>, keyer: &super::survey::Keyer<'_>) -> Packed {
        let keys = keyer.keys(&candidates);
        Packed::with_keys(candidates, keys)
    }

    /// `candidates` packed with their `keys`, taken already (so their stats are not kept).
    pub fn with_keys(candidates: Vec<Candidate>, keys: Vec<u64>) -> Packed {
        let mut p = Packed::build(candidates, |_| {});
        p.keys = keys;
        p
    }

    /// Keyed surveys packed apart (a directory's each, on discovery's threads) joined end
    /// to end in their order: their parts are taken as they are, only the keys are copied.
    /// Issue 10: each directory's candidates packed and keyed where they were listed are
    /// never all held whole at once, nor the stats discovery took of them.
    pub fn join(pieces: Vec<Packed>) -> Packed {
        let mut keys = Vec::with_capacity(pieces.iter().map(|p| p.keys.len()).sum());
        let mut parts = Vec::with_capacity(pieces.iter().map(|p| p.parts.len()).sum());
        for p in pieces {
            debug_assert_eq!(p.keys.len(), p.count(), "a piece is keyed");
            keys.extend_from_slice(&p.keys);
            parts.extend(p.parts);
        }
        Packed::from_parts(parts, keys)
    }

    /// Candidate `i` written into `c`, reusing its buffers (keying a packed survey builds
    /// no candidate a session); its `stat` is left `None`.
    pub fn fill(&self, i: usize, c: &mut Candidate) {
        let (p, i) = self.at(i);
        p.fill(i, c);
    }

    /// The heap bytes it holds (tests bound them).
    pub fn bytes(&self) -> usize {
        (self.parts.iter()).map(Part::bytes).sum::<usize>()
            + self.parts.capacity() * std::mem::size_of::<Part>()
            + self.ends.capacity() * 8
            + self.keys.capacity() * 8
    }
}

impl Part {
    fn fill(&self, i: usize, c: &mut Candidate) {
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

    fn bytes(&self) -> usize {
        self.text.capacity()
            + self.spots.capacity() * std::mem::size_of::<Spot>()
            + self.mtimes.capacity() * std::mem::size_of::<Option<SystemTime>>()
            + (self.dirs.iter()).map(|d| d.capacity() + 24).sum::<usize>()
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
}

/// What candidate `id` at `path` may store in a survey's text at most (its id, and its
/// name), for `Packed::build`'s room.
fn room(id: &str, path: &Path) -> usize {
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
        self.ends.last().copied().unwrap_or(0)
    }

    fn id(&self, i: usize) -> &str {
        let (p, i) = self.at(i);
        p.id(i)
    }

    fn path<'a>(&'a self, i: usize, buf: &'a mut PathBuf) -> &'a Path {
        let (p, i) = self.at(i);
        p.path(i, buf)
    }

    fn with<R>(&self, i: usize, f: impl FnOnce(&Candidate) -> R) -> R {
        let (p, i) = self.at(i);
        let mut buf = PathBuf::new();
        let path = p.path(i, &mut buf).to_path_buf();
        f(&Candidate {
            id: p.id(i).to_string(),
            path,
            mtime: p.mtimes[i],
            stat: None,
        })
    }
}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;
