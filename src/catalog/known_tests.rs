//! Tests of `Known`: lookups, the watcher's updates, and the table's size.

use super::*;

#[test]
fn a_session_is_found_by_id_and_a_move_is_seen() {
    let mut k = Known::default();
    k.insert("a", Path::new("/s/a.jsonl"), 7);
    assert!(k.contains_key("a") && !k.contains_key("b"));
    assert_eq!(k.get("a").map(|s| s.key), Some(7));
    assert!(!k.moved("a", Path::new("/s/a.jsonl")));
    assert!(k.moved("a", Path::new("/t/a.jsonl")));
    assert!(
        !k.moved("b", Path::new("/s/a.jsonl")),
        "unknown is new, not moved"
    );
    k.insert(String::from("a"), Path::new("/t/a.jsonl"), 8);
    assert_eq!(k.len(), 1);
    assert!(!k.moved("a", Path::new("/t/a.jsonl")));
    k.remove("a");
    assert!(k.is_empty());
}

/// Paths that compare equal hash equal, whether written plainly or not, and the plain
/// form is hashed as it is written.
#[test]
fn equal_paths_hash_equal() {
    let groups: [&[&str]; 6] = [
        &["/s/a.jsonl", "/s//a.jsonl", "/s/./a.jsonl", "//s/a.jsonl"],
        &["/s/col/id", "/s/col/id/", "/s/col/id/.", "/s/col//id//"],
        &["/", "//", "/."],
        &["rel/x", "rel//x", "rel/./x", "rel/x/"],
        &["/s/a.json", "/s/a.json/"],
        &["/s/a..json", "/s/a..json/"],
    ];
    let hashes: Vec<Vec<u64>> = (groups.iter())
        .map(|g| g.iter().map(|p| path_hash(Path::new(p))).collect())
        .collect();
    for (g, h) in groups.iter().zip(&hashes) {
        for (p, x) in g.iter().zip(h) {
            assert_eq!(*x, h[0], "{p} and {}", g[0]);
            assert_eq!(Path::new(p), Path::new(g[0]));
        }
    }
    let firsts: std::collections::HashSet<u64> = hashes.iter().map(|h| h[0]).collect();
    assert_eq!(
        firsts.len(),
        groups.len(),
        "different paths, different hashes"
    );
    assert!(is_plain(b"/s/col/id") && !is_plain(b"/s/col/id/") && !is_plain(b"rel"));
    assert_eq!(plain_form(Path::new("/s//col/./id/")), b"/s/col/id");
}

/// Two words of slot and one of key pointer beside each id: the path is not kept.
#[test]
fn an_entry_is_a_boxed_id_and_two_hashes() {
    assert_eq!(std::mem::size_of::<(std::sync::Arc<str>, Slot)>(), 32);
}

/// Ids `id0`, `id1`... up to the first two of equal `id_hash` (a birthday search over 32 bits:
/// about 80k ids), so a run of equal hashes is exercised.
fn colliding() -> (String, String) {
    let mut seen = std::collections::HashMap::new();
    for i in 0u32.. {
        let id = format!("id{i}");
        if let Some(j) = seen.insert(id_hash(&id), i) {
            return (format!("id{j}"), id);
        }
    }
    unreachable!()
}

fn slot(path: u64, key: u64) -> Slot {
    Slot { path, key }
}

/// Built whole, every id is found with its last slot, ids of equal hash included.
#[test]
fn a_table_built_whole_finds_every_id_and_keeps_the_last_of_a_repeated_one() {
    let (a, b) = colliding();
    assert_eq!(id_hash(&a), id_hash(&b));
    let mut entries: Vec<(std::sync::Arc<str>, Slot)> = (0..1000u64)
        .map(|i| (format!("s{i}").into(), slot(i, i)))
        .collect();
    entries.push((a.as_str().into(), slot(1, 1)));
    entries.push((b.as_str().into(), slot(2, 2)));
    entries.push((a.as_str().into(), slot(3, 3)));
    entries.push(("s5".into(), slot(50, 50)));
    entries.push((b.as_str().into(), slot(4, 4)));
    let k = Known::from_unsorted(entries);
    assert_eq!(k.len(), 1002, "each id once");
    assert_eq!(k.get(&a), Some(&slot(3, 3)));
    assert_eq!(k.get(&b), Some(&slot(4, 4)));
    assert_eq!(k.get("s5"), Some(&slot(50, 50)));
    for i in (0..1000u64).filter(|&i| i != 5) {
        assert_eq!(k.get(&format!("s{i}")), Some(&slot(i, i)));
    }
    assert!(k.get("s1000").is_none() && k.get("").is_none());
    let mut keys: Vec<&str> = k.keys().collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), 1002);
}

/// Inserts, updates and removals in any order answer as a map would, across the merges of
/// the ids inserted after the table was built.
#[test]
fn a_table_answers_as_a_map_through_inserts_and_removals() {
    use std::collections::HashMap;
    let (a, b) = colliding();
    let mut k = Known::from_unsorted(
        (0..3000u64)
            .map(|i| (format!("s{i}").into(), slot(i, 0)))
            .collect(),
    );
    let mut m: HashMap<String, Slot> = (0..3000u64)
        .map(|i| (format!("s{i}"), slot(i, 0)))
        .collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for step in 0..20_000u64 {
        let r = next();
        let id = match r % 7 {
            0 => a.clone(),
            1 => b.clone(),
            _ => format!("s{}", (r >> 8) % 5000),
        };
        match (r >> 40) % 4 {
            0 | 1 => {
                k.insert_hashed(id.as_str(), step, r);
                m.insert(id.clone(), slot(step, r));
            }
            2 => {
                k.remove(&id);
                m.remove(&id);
            }
            _ => {
                let gone =
                    |s: &str| s.ends_with(&format!("{}", r % 10)) && s.len().is_multiple_of(2);
                let mut out: Vec<String> = k
                    .remove_if(gone)
                    .into_iter()
                    .map(|id| id.to_string())
                    .collect();
                let mut want: Vec<String> = m.keys().filter(|s| gone(s)).cloned().collect();
                m.retain(|s, _| !gone(s));
                out.sort();
                want.sort();
                assert_eq!(out, want, "step {step}");
            }
        }
        assert_eq!(k.get(&id), m.get(&id), "step {step}");
    }
    assert_eq!(k.len(), m.len());
    for (id, s) in &m {
        assert_eq!(k.get(id), Some(s));
    }
    let mut keys: Vec<&str> = k.keys().collect();
    keys.sort_unstable();
    let mut want: Vec<&str> = m.keys().map(|s| s.as_str()).collect();
    want.sort_unstable();
    assert_eq!(keys, want);
}

/// A store's table at 100k sessions (about 33k each) is its entries and their hashes, 36
/// bytes each: a hash table took 65,536 buckets of 33 bytes for them (issue 10).
#[test]
fn a_table_built_whole_holds_36_bytes_an_entry() {
    let n = 33_334;
    let k = Known::from_unsorted(
        (0..n)
            .map(|i| entry(format!("{i:036}").as_str(), Path::new("/s"), 0))
            .collect(),
    );
    assert_eq!(k.table_bytes(), n * 36);
}

/// A cold listing's table shares its row's id, and makes its own only where there is no row
/// of that id (a skipped candidate, or a row whose id differs from its file's name).
#[test]
fn a_listed_id_is_its_rows_own_allocation() {
    let row = crate::model::SessionSummary::new(
        crate::model::StoreKind::Loom,
        "20260101-000000-ab",
        "/s/20260101-000000-ab.jsonl",
    );
    let shared = row_id_or(Some(&row), "20260101-000000-ab");
    assert!(Arc::ptr_eq(&shared, &row.id), "a copy, not the row's id");
    let other = row_id_or(Some(&row), "20260101-000000-cd");
    assert_eq!(&*other, "20260101-000000-cd");
    assert!(!Arc::ptr_eq(&other, &row.id));
    assert_eq!(&*row_id_or(None, "x"), "x");
}
