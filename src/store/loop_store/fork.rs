//! Fork (section 9.6, DECIDED): a new session of the same storage version holding the source's
//! first `k` messages (byte-identical), published without ever replacing an existing path.

use std::fs;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use chrono::Utc;
use serde_json::{Map, Value, json};

use super::header::{iso_string, new_uuid, safe_uint};
use super::history::{read_full, rounds_of, sha256_hex};
use super::listing::summary_from_head;
use super::validate::role;
use super::{Layout, Loc};
use crate::error::{Error, Result};
use crate::store::atomic;

/// Keep only the entries of `key` that `keep` accepts; drop the key when none remain.
fn filter_key(h: &mut Map<String, Value>, key: &str, keep: impl Fn(&Value) -> bool) {
    if let Some(Value::Array(a)) = h.get_mut(key) {
        a.retain(|e| keep(e));
        if a.is_empty() {
            h.shift_remove(key);
        }
    }
}

/// The fork's header: a copy of the source's with a new identity, no pin, read, a lineage
/// link, and (when cutting) no sub-object that refers at or beyond the cut.
pub(crate) fn fork_header(
    src: &Map<String, Value>,
    msgs: &[Value],
    src_id: &str,
    new_id: &str,
    k: usize,
) -> Map<String, Value> {
    let mut h = src.clone();
    let now = iso_string(Utc::now());
    h.insert("id".into(), new_id.into());
    h.insert("createdAt".into(), now.clone().into());
    h.insert("updatedAt".into(), now.into());
    h.insert("unread".into(), false.into());
    h.shift_remove("pinnedAt");
    h.insert(
        "forkedFrom".into(),
        json!({"id": src_id, "messageCount": k}),
    );
    if k < msgs.len() {
        let k64 = k as u64;
        let users = msgs[..k].iter().filter(|m| role(m) == "user").count() as u64;
        let n = |e: &Value, key: &str| safe_uint(e.get(key));
        filter_key(&mut h, "compactions", |c| {
            n(c, "historyMessageCount").is_some_and(|x| x <= k64)
        });
        filter_key(&mut h, "runtimeContexts", |r| {
            n(r, "userTurn").is_some_and(|t| t < users)
        });
        filter_key(&mut h, "promptTimings", |t| {
            n(t, "userMessageIndex").is_some_and(|u| u < k64)
                && n(t, "messageEndIndex").is_none_or(|e| e <= k64)
        });
        filter_key(&mut h, "systemPromptCheckpoints", |c| {
            n(c, "messageCount").is_some_and(|x| x <= k64)
        });
        let drop_title = h.get("title").is_some_and(|t| {
            t.get("source").and_then(Value::as_str) != Some("user")
                && t.get("messageIndices")
                    .and_then(Value::as_array)
                    .is_some_and(|a| {
                        a.iter()
                            .any(|i| safe_uint(Some(i)).is_none_or(|i| i >= k64))
                    })
        });
        if drop_title {
            h.shift_remove("title");
        }
    }
    h
}

fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = atomic::create_new(path).map_err(|e| Error::io("creating", path, e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io("writing", path, e))
}

fn pretty(v: &Value) -> Result<Vec<u8>> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| Error::Corrupt(e.to_string()))?;
    s.push('\n');
    Ok(s.into_bytes())
}

/// Write the three files into `.stage-<uuid>/` and rename it to `<collection>/<new_id>`.
fn publish_v3(
    collection: &Path,
    new_id: &str,
    header: Map<String, Value>,
    bytes: &[u8],
    rounds: &[(usize, u64)],
    k: usize,
) -> Result<()> {
    let stage = collection.join(format!(".stage-{}", new_uuid()));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&stage)
        .map_err(|e| Error::io("creating", &stage, e))?;
    let generation = sha256_hex(bytes);
    let result = (|| {
        write_new(&stage.join("messages.jsonl"), bytes)?;
        let meta = json!({"format": "loop-session", "version": 3, "header": header,
            "generation": generation, "start": 0, "bytes": bytes.len(), "messageCount": k});
        write_new(&stage.join("meta.json"), &pretty(&meta)?)?;
        let rounds: Vec<Value> = rounds
            .iter()
            .map(|(m, o)| json!({"messageIndex": m, "byteOffset": o}))
            .collect();
        let index = json!({"generation": generation, "rounds": rounds});
        write_new(&stage.join("index.json"), &pretty(&index)?)?;
        atomic::fsync_dir(&stage).map_err(|e| Error::io("syncing directory", &stage, e))?;
        let target = collection.join(new_id);
        atomic::rename_no_replace(&stage, &target).map_err(|e| Error::io("publishing", &target, e))
    })();
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&stage);
        return Err(e);
    }
    atomic::fsync_dir(collection).map_err(|e| Error::io("syncing directory", collection, e))
}

/// Fork `loc`, cutting before stored message `at` (a round boundary) or copying everything.
pub(crate) fn fork(loc: &Loc, at: Option<usize>) -> Result<String> {
    let h = read_full(loc)?;
    let row = summary_from_head(loc, &h.head);
    if row.read_only {
        return Err(Error::Refused(format!(
            "session {} is read-only ({}); it cannot be forked",
            loc.id,
            row.error()
                .map(String::from)
                .unwrap_or_else(|| row.badge_text())
        )));
    }
    if !h.warnings.is_empty() {
        return Err(Error::Refused(format!(
            "session {} fails strict validation ({}); it cannot be forked",
            loc.id,
            h.warnings.join("; ")
        )));
    }
    if row.badges().any(|b| b == "cwd missing") {
        return Err(Error::Refused(format!(
            "the working directory of session {} no longer exists; not forking into it",
            loc.id
        )));
    }
    let count = h.messages.len();
    let rounds = rounds_of(&h.messages, &h.offsets);
    let k = at.unwrap_or(count);
    if k != count && !rounds.iter().any(|r| r.0 == k) {
        return Err(Error::Refused(format!(
            "a Loop fork can only cut before a user message (a round boundary); message {k} is not one"
        )));
    }
    if at.is_some() && !h.messages[..k].iter().any(|m| role(m) == "user") {
        return Err(crate::store::empty_fork(
            crate::model::StoreKind::Loop,
            &loc.id,
            k,
        ));
    }
    let cut = h.offsets.get(k).map_or(h.bytes.len(), |&o| o as usize);
    let new_id = new_uuid();
    let header = fork_header(&h.head.header, &h.messages, &loc.id, &new_id, k);
    match loc.layout {
        Layout::V3 => {
            let kept: Vec<(usize, u64)> = rounds.into_iter().filter(|r| r.0 < k).collect();
            publish_v3(&loc.collection, &new_id, header, &h.bytes[..cut], &kept, k)?;
        }
        Layout::Legacy => {
            let line = serde_json::to_string(&Value::Object(header))
                .map_err(|e| Error::Corrupt(e.to_string()))?;
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            bytes.extend_from_slice(&h.bytes[..cut]);
            if !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            let path = loc.collection.join(format!("{new_id}.jsonl"));
            let tmp = format!("{new_id}.jsonl.{}.tmp", atomic::random_hex(8));
            atomic::create_no_clobber(&path, &bytes, &tmp)?;
        }
    }
    Ok(new_id)
}
