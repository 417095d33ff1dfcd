//! Generated Codex rollouts for the cold-start tests: many small ones across day
//! directories, each with its creation time in its name, its last activity in its records,
//! and an mtime of the test's choosing.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// 2026-03-01T00:00:00Z, the first rollout's creation.
const T0: u64 = 1_772_323_200;

/// One rollout: created `created` seconds after `T0` (its name, its day directory), last
/// active and written (mtime) `active` seconds after `T0`, titled `title`. `archived` puts
/// it in `archived_sessions/`.
pub fn write(
    codex: &Path,
    n: u64,
    created: u64,
    active: u64,
    title: &str,
    archived: bool,
) -> PathBuf {
    let at = |s: u64| {
        chrono::DateTime::from_timestamp((T0 + s) as i64, 0)
            .unwrap()
            .naive_utc()
    };
    let (c, a) = (at(created), at(active));
    let id = format!("019ceba0-ae55-7d10-9f2a-{n:012x}");
    let dir = if archived {
        codex.join("archived_sessions")
    } else {
        codex.join(c.format("sessions/%Y/%m/%d").to_string())
    };
    std::fs::create_dir_all(&dir).unwrap();
    let ts = |t: chrono::NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let lines = [
        serde_json::json!({"timestamp":ts(c),"type":"session_meta",
            "payload":{"id":id,"timestamp":ts(c),"cwd":"/w","source":"cli"}}),
        serde_json::json!({"timestamp":ts(c),"type":"turn_context",
            "payload":{"turn_id":"t1","cwd":"/w","model":"gpt-5.5"}}),
        serde_json::json!({"timestamp":ts(a),"type":"event_msg",
            "payload":{"type":"user_message","message":title}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let name = format!("rollout-{}-{id}.jsonl", c.format("%Y-%m-%dT%H-%M-%S"));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_secs(T0 + active))
        .unwrap();
    path
}

/// `count` rollouts an hour apart, each active for ten minutes, titled `session N`; the
/// last one created is the newest. Then one created first but resumed after all of them
/// (`resumed`), and an archived copy of the newest (Codex's interrupted archive).
pub fn store(codex: &Path, count: u64) {
    for n in 0..count {
        write(
            codex,
            n,
            n * 3600,
            n * 3600 + 600,
            &format!("session {n}"),
            false,
        );
    }
    let last = count * 3600;
    write(codex, count, 0, last + 900, "resumed", false);
    write(
        codex,
        count - 1,
        (count - 1) * 3600,
        (count - 1) * 3600 + 600,
        &format!("session {}", count - 1),
        true,
    );
}
