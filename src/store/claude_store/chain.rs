//! Lineage inside one file (claude-code.md section 4): the active leaf, the walk back along
//! `parentUuid` that crosses compaction boundaries through `logicalParentUuid`, branch points
//! with their alternative branches, and records no chain reaches ("unlinked").

use std::collections::{HashMap, HashSet};

use super::read::Rec;
use super::record as r;

/// The main view of a file: positions into the records, in display order.
#[derive(Debug, Default)]
pub struct Chain {
    pub path: Vec<usize>,
    /// Record position -> number of alternative branches starting after it.
    pub branches: HashMap<usize, usize>,
    /// Main records not reachable from any chain root (a parent lost to a bad line).
    pub unlinked: Vec<usize>,
}

fn conversational(kind: &str) -> bool {
    matches!(kind, "user" | "assistant" | "system" | "attachment")
}

pub fn build(recs: &[Rec]) -> Chain {
    let main: Vec<usize> = (0..recs.len())
        .filter(|&i| r::is_main(&recs[i].v) && conversational(r::kind(&recs[i].v)))
        .collect();
    let mut by_uuid: HashMap<&str, usize> = HashMap::new();
    for &i in &main {
        if let Some(u) = r::uuid(&recs[i].v) {
            by_uuid.entry(u).or_insert(i);
        }
    }
    // No uuids at all (hand-made or very old files): file order.
    if by_uuid.is_empty() {
        return Chain {
            path: main,
            ..Chain::default()
        };
    }
    let leaf = main.iter().rev().copied().find(|&i| {
        matches!(r::kind(&recs[i].v), "user" | "assistant") && r::uuid(&recs[i].v).is_some()
    });
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = leaf;
    while let Some(i) = cur {
        if !seen.insert(i) {
            break; // a cycle written by a confused tool: stop rather than loop
        }
        path.push(i);
        let v = &recs[i].v;
        let up = r::parent(v).or_else(|| {
            (r::s(v, "subtype") == Some("compact_boundary"))
                .then(|| r::s(v, "logicalParentUuid"))
                .flatten()
        });
        cur = up.and_then(|u| by_uuid.get(u).copied());
    }
    path.reverse();
    // Children per parent, for branch points along the path.
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    for &i in &main {
        if let Some(p) = r::parent(&recs[i].v) {
            children.entry(p).or_default().push(i);
        }
    }
    let on_path: HashSet<usize> = path.iter().copied().collect();
    let mut branches = HashMap::new();
    for &i in &path {
        if let Some(u) = r::uuid(&recs[i].v)
            && let Some(kids) = children.get(u)
            && kids.len() > 1
        {
            branches.insert(i, kids.len() - 1);
        }
    }
    // A record whose ancestry ends at a uuid that is not in the file is unlinked.
    let mut unlinked = Vec::new();
    for &i in &main {
        if on_path.contains(&i) || r::uuid(&recs[i].v).is_none() {
            continue;
        }
        let mut cur = i;
        let mut guard = 0;
        let lost = loop {
            guard += 1;
            match r::parent(&recs[cur].v) {
                None => break false,
                Some(p) => match by_uuid.get(p) {
                    Some(&next) if guard < main.len() => cur = next,
                    Some(_) => break false,
                    None => break true,
                },
            }
        };
        if lost {
            unlinked.push(i);
        }
    }
    // Queued prompts without a uuid sit where their timestamp puts them.
    for &i in &main {
        let v = &recs[i].v;
        if r::uuid(v).is_none() && r::queued_prompt(v).is_some() {
            let t = r::timestamp(v);
            let at = path
                .iter()
                .position(|&j| r::timestamp(&recs[j].v).is_some_and(|tj| Some(tj) > t))
                .unwrap_or(path.len());
            path.insert(at, i);
        }
    }
    Chain {
        path,
        branches,
        unlinked,
    }
}
