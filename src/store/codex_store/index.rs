//! `session_index.jsonl` (codex.md section 3, title step 3): `{id, thread_name, updated_at}`
//! appended on rename by older releases; the newest entry per id wins and a blank name
//! clears it. Bad lines are skipped. Read once per change of the file (size and mtime).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::store::lines::{self, RawLine};
use crate::store::regular::{self, Links};

/// The index is a list of names: more than this is not read.
const CAP: u64 = 64 * 1024 * 1024;

type Names = Arc<HashMap<String, String>>;

/// The names of the last read, with the size and mtime they were read at.
#[derive(Default)]
pub struct Cache(Mutex<Option<(u64, Option<SystemTime>, Names)>>);

impl Cache {
    /// Thread names by lowercase id.
    pub fn names(&self, root: &Path) -> Names {
        let path = root.join("session_index.jsonl");
        let Ok(meta) = std::fs::metadata(&path) else {
            return Names::default();
        };
        let key = (meta.len(), meta.modified().ok());
        let mut c = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((len, mtime, names)) = c.as_ref()
            && (*len, *mtime) == key
        {
            return names.clone();
        }
        let names = Arc::new(read(&path));
        *c = Some((key.0, key.1, names.clone()));
        names
    }
}

fn read(path: &Path) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let Ok(f) = regular::open(path, Links::Refuse) else {
        return names;
    };
    let _ = lines::for_each_line(std::io::Read::take(f, CAP), 64 * 1024, |line| {
        let RawLine::Line { bytes, .. } = line else {
            return;
        };
        let Some((v, _)) = crate::store::entries::decode(bytes) else {
            return;
        };
        let Some(id) = v.get("id").and_then(|i| i.as_str()) else {
            return;
        };
        let id = id.to_ascii_lowercase();
        match v.get("thread_name").and_then(|n| n.as_str()) {
            Some(n) if !n.trim().is_empty() => {
                names.insert(id, n.to_string());
            }
            Some(_) => {
                names.remove(&id);
            }
            None => {}
        }
    });
    names
}
