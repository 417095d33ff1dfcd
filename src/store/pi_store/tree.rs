//! The entry tree (pi.md section 4): entries indexed by id (a later duplicate wins, as in
//! pi's map), the active leaf = the last entry in file order, the active path from it to its
//! root, the branch points on that path, and orphans whose parent is missing.

use std::collections::{HashMap, HashSet};

use super::read::Ent;

#[derive(Debug, Default)]
pub struct Tree {
    /// id -> position in `ents`.
    pub index: HashMap<String, usize>,
    /// Position of the parent of each entry, when it exists.
    pub parent: Vec<Option<usize>>,
    /// Children of each position, in file order.
    pub children: Vec<Vec<usize>>,
    /// The active path, root first.
    pub path: Vec<usize>,
    /// Entries that name a parent which is not in the file (after a bad line or a branch
    /// deletion): roots of "unlinked entries".
    pub orphans: Vec<usize>,
    /// Entry ids that occur more than once.
    pub duplicates: u64,
}

/// A branch point on the active path: the entry, and the first entries of the subtrees that
/// leave the path there.
#[derive(Debug)]
pub struct Fork {
    pub at: usize,
    pub others: Vec<usize>,
}

pub fn build(ents: &[Ent]) -> Tree {
    let mut t = Tree {
        children: vec![Vec::new(); ents.len()],
        ..Tree::default()
    };
    for (i, e) in ents.iter().enumerate() {
        if t.index.insert(e.id.clone(), i).is_some() {
            t.duplicates += 1;
        }
    }
    for (i, e) in ents.iter().enumerate() {
        // Only the winning copy of a duplicated id takes part in the tree.
        if t.index.get(&e.id) != Some(&i) {
            t.parent.push(None);
            continue;
        }
        let p = e
            .parent
            .as_ref()
            .filter(|p| **p != e.id)
            .and_then(|p| t.index.get(p).copied());
        if p.is_none() && e.parent.as_ref().is_some_and(|p| *p != e.id) {
            t.orphans.push(i);
        }
        if let Some(p) = p {
            t.children[p].push(i);
        }
        t.parent.push(p);
    }
    // The leaf is the last entry whose id won (pi's `_buildIndex`).
    let leaf = (0..ents.len())
        .rev()
        .find(|&i| t.index.get(&ents[i].id) == Some(&i));
    let mut seen = HashSet::new();
    let mut at = leaf;
    while let Some(i) = at {
        if !seen.insert(i) {
            break; // A cycle: stop rather than loop.
        }
        t.path.push(i);
        at = t.parent[i];
    }
    t.path.reverse();
    t
}

impl Tree {
    /// The branch points along the active path.
    pub fn forks(&self) -> Vec<Fork> {
        self.path
            .iter()
            .enumerate()
            .filter_map(|(k, &at)| {
                let next = self.path.get(k + 1).copied();
                let others: Vec<usize> = self.children[at]
                    .iter()
                    .copied()
                    .filter(|c| Some(*c) != next)
                    .collect();
                (!others.is_empty()).then_some(Fork { at, others })
            })
            .collect()
    }

    /// Every entry of the subtree under `root` (itself included), in file order.
    pub fn subtree(&self, root: usize) -> Vec<usize> {
        let mut seen = HashSet::from([root]);
        let mut out = vec![root];
        let mut k = 0;
        while k < out.len() {
            for &c in &self.children[out[k]] {
                if seen.insert(c) {
                    out.push(c);
                }
            }
            k += 1;
        }
        out.sort_unstable();
        out
    }

    /// Number of entries with more than one child anywhere in the file.
    pub fn branch_points(&self) -> usize {
        self.children.iter().filter(|c| c.len() > 1).count()
    }

    pub fn on_path(&self) -> HashSet<usize> {
        self.path.iter().copied().collect()
    }
}
