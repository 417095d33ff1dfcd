//! Synthetic, contract-valid session corpus for benchmarks and load tests: Loop v3 (plus some
//! legacy v2) sessions, loom logs and agent-harness records under `root/{loop,loom,harness}`
//! (the layout of `Roots::all_in(root)`), deterministic from a seed.
//!
//! This is test tooling, not a store writer: files are written with plain `std::fs` (no
//! fsync, no temp-and-rename) because nobody's sessions are at stake and 100k sessions must
//! generate in seconds. The bytes still follow the contracts exactly (generation hashes,
//! committed ranges, round index offsets, key orders, wrappers), so readers see them as real.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, Offset, SecondsFormat, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::hex::encode as hex;
use crate::store::Roots;

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusSpec {
    /// Sessions split across the stores: Loop gets a third (rounded up), loom a third, harness the rest.
    pub sessions: usize,
    /// User rounds per session (each round is 2–4 messages).
    pub rounds_per_session: usize,
    pub seed: u64,
    /// One extra Loop v3 session whose `messages.jsonl` is at least this many MiB.
    pub big_transcript_mb: Option<usize>,
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusStats {
    pub loop_sessions: usize,
    pub loom_sessions: usize,
    pub harness_sessions: usize,
    /// Id of the big Loop session, when one was asked for.
    pub big_session: Option<String>,
    pub files: usize,
    pub bytes: u64,
}

/// Write a corpus under `root` (created if missing; existing files with the same names are
/// overwritten, so use an empty directory).
pub fn generate(root: &Path, spec: &CorpusSpec) -> io::Result<CorpusStats> {
    let roots = Roots::all_in(root);
    let mut g = Gen {
        rng: Rng::new(spec.seed),
        stats: CorpusStats::default(),
        archives: BTreeMap::new(),
        base_ms: BASE_MS,
    };
    let n_loop = spec.sessions.div_ceil(3);
    let n_loom = spec.sessions / 3;
    let n_harness = spec.sessions - n_loop - n_loom;
    let loop_sessions = roots.loop_dir.join("sessions");
    for i in 0..n_loop {
        g.loop_session(&loop_sessions, i, spec.rounds_per_session)?;
    }
    if let Some(mb) = spec.big_transcript_mb {
        let id = g.big_loop_session(&loop_sessions, mb)?;
        g.stats.big_session = Some(id);
    }
    for (dir, ids) in std::mem::take(&mut g.archives) {
        let body = serde_json::to_string(&ids).map_err(io::Error::other)? + "\n";
        g.write(&dir.join("archive.json"), body.as_bytes())?;
    }
    let loom_sessions = roots.loom_dir.join("sessions");
    fs::create_dir_all(loom_sessions.join(".spool"))?;
    for i in 0..n_loom {
        g.loom_session(&loom_sessions, i, spec.rounds_per_session)?;
    }
    let harness_sessions = roots.harness_dir.join("sessions");
    fs::create_dir_all(harness_sessions.join(".spool"))?;
    for i in 0..n_harness {
        g.harness_session(&harness_sessions, i, spec.rounds_per_session)?;
    }
    Ok(g.stats)
}

/// 2026-11-30T00:00:00Z: sessions go back in time from here.
const BASE_MS: i64 = 1_795_996_800_000;
const PROJECTS: [&str; 8] = [
    "ledgerly",
    "tinyhttp",
    "pixelforge",
    "harbor",
    "weatherstation",
    "handbook",
    "orbit",
    "quill",
];
const WORDS: [&str; 48] = [
    "the",
    "router",
    "test",
    "fails",
    "when",
    "config",
    "loads",
    "invoice",
    "total",
    "cache",
    "migration",
    "batch",
    "parser",
    "handles",
    "empty",
    "input",
    "timeout",
    "on",
    "CI",
    "only",
    "refactor",
    "module",
    "into",
    "smaller",
    "functions",
    "and",
    "keep",
    "API",
    "stable",
    "why",
    "does",
    "panic",
    "after",
    "upgrade",
    "benchmark",
    "allocations",
    "docs",
    "for",
    "release",
    "flag",
    "retry",
    "backoff",
    "sensor",
    "export",
    "slow",
    "index",
    "rebuild",
    "lock",
];
const COMMANDS: [&str; 6] = [
    "cargo test -q",
    "go test ./...",
    "pytest -q tests/",
    "pnpm test && pnpm lint",
    "git diff --stat",
    "grep -rn TODO src/",
];

/// xorshift64: tiny, fast and reproducible (no `rand` dependency).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn sentence(&mut self, min: u64, max: u64) -> String {
        let n = min + self.below(max - min + 1);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
        }
        s
    }

    /// A lowercase v4-shaped UUID (Loop's id regex `^[a-f0-9-]{36}$`).
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        let hex = format!("{a:016x}{b:016x}");
        format!(
            "{}-{}-4{}-{}{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[13..16],
            ["8", "9", "a", "b"][(b & 3) as usize],
            &hex[17..20],
            &hex[20..32]
        )
    }

    /// `secrets.token_urlsafe(12)`-shaped: 16 characters of URL-safe base64.
    fn harness_id(&mut self) -> String {
        const ALPHA: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let (mut a, mut b) = (self.next(), self.next());
        let mut s = String::with_capacity(16);
        for i in 0..16 {
            let v = if i < 8 { &mut a } else { &mut b };
            s.push(ALPHA[(*v & 63) as usize] as char);
            *v >>= 6;
        }
        s
    }
}

fn cwd(project: usize) -> String {
    format!(
        "/home/bench/projects/{}",
        PROJECTS[project % PROJECTS.len()]
    )
}

/// Loop's workspace collection name: first 24 hex chars of sha256(cwd).
fn collection(cwd: &str) -> String {
    crate::store::loop_store::workspace_hash(cwd)
}

fn iso_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn iso_secs(ms: i64, offset_h: i32) -> String {
    let off = FixedOffset::east_opt(offset_h * 3600).unwrap_or_else(|| Utc.fix());
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&off)
        .to_rfc3339_opts(SecondsFormat::Secs, offset_h == 0)
}

/// A JSON string literal (our texts are ASCII words, but escape properly anyway).
fn jstr(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn pretty(v: &Value) -> io::Result<String> {
    Ok(serde_json::to_string_pretty(v).map_err(io::Error::other)? + "\n")
}

/// A Loop message history being built: the committed bytes plus the round index.
struct LoopBody {
    bytes: Vec<u8>,
    rounds: Vec<(usize, usize)>,
    count: usize,
    ts: i64,
    calls: usize,
}

impl LoopBody {
    fn new(ts: i64) -> LoopBody {
        LoopBody {
            bytes: Vec::new(),
            rounds: Vec::new(),
            count: 0,
            ts,
            calls: 0,
        }
    }

    fn line(&mut self, line: &str) {
        self.bytes.extend_from_slice(line.as_bytes());
        self.bytes.push(b'\n');
        self.count += 1;
    }

    /// One round: user, then (mostly) a bash call with its result, then a reply.
    fn round(&mut self, rng: &mut Rng, reply_words: u64) {
        const ASSISTANT: &str = r#""api":"openai-responses","provider":"openai","model":"gpt-5.5""#;
        let usage = |i: u64, o: u64| {
            format!(
                r#""usage":{{"input":{i},"output":{o},"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}}"#,
                i + o
            )
        };
        self.rounds.push((self.count, self.bytes.len()));
        self.ts += 60_000 + rng.below(600_000) as i64;
        let user = jstr(&rng.sentence(4, 20));
        self.line(&format!(
            r#"{{"role":"user","content":{user},"timestamp":{}}}"#,
            self.ts
        ));
        if rng.below(5) != 0 {
            self.calls += 1;
            let id = format!("call_{:08x}", self.calls);
            let cmd = jstr(COMMANDS[rng.below(COMMANDS.len() as u64) as usize]);
            self.ts += 2_000 + rng.below(9_000) as i64;
            self.line(&format!(
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{id}","name":"bash","arguments":{{"command":{cmd}}}}}],{ASSISTANT},{},"stopReason":"toolUse","timestamp":{}}}"#,
                usage(2_000 + rng.below(30_000), 40),
                self.ts
            ));
            self.ts += 500 + rng.below(20_000) as i64;
            let out = jstr(&rng.sentence(5, 60));
            self.line(&format!(
                r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":[{{"type":"text","text":{out}}}],"isError":false,"timestamp":{}}}"#,
                self.ts
            ));
        }
        self.ts += 2_000 + rng.below(20_000) as i64;
        let text = jstr(&rng.sentence(reply_words / 2, reply_words));
        self.line(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":{text}}}],{ASSISTANT},{},"stopReason":"stop","timestamp":{}}}"#,
            usage(2_000 + rng.below(30_000), reply_words * 2),
            self.ts
        ));
    }
}

struct Gen {
    rng: Rng,
    stats: CorpusStats,
    /// Collection dir -> archived ids, written once at the end.
    archives: BTreeMap<PathBuf, Vec<String>>,
    base_ms: i64,
}

impl Gen {
    fn write(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        fs::write(path, bytes)?;
        self.stats.files += 1;
        self.stats.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Start time of session `i` of a store: spread back over ~6 weeks.
    fn start_ms(&mut self, i: usize) -> i64 {
        self.base_ms - (i as i64 % 40_000) * 97_000 - self.rng.below(60_000) as i64 - 3_600_000
    }

    fn loop_session(&mut self, sessions: &Path, i: usize, rounds: usize) -> io::Result<()> {
        let cwd = cwd(i);
        let coll = sessions.join(collection(&cwd));
        let id = self.rng.uuid();
        let created = self.start_ms(i);
        let mut body = LoopBody::new(created);
        for _ in 0..rounds {
            body.round(&mut self.rng, 40);
        }
        let mut header = json!({
            "format": "loop-session", "version": 2, "id": id, "cwd": cwd,
            "createdAt": iso_ms(created), "updatedAt": iso_ms(body.ts),
            "unread": i.is_multiple_of(3),
        });
        if i.is_multiple_of(10) {
            header["pinnedAt"] = json!(iso_ms(body.ts + 30_000));
        }
        header["model"] = json!({"provider": "openai", "id": "gpt-5.5", "effort": "medium"});
        header["permissionPreset"] = json!("workspace-write");
        if i % 17 == 5 {
            self.archives
                .entry(coll.clone())
                .or_default()
                .push(id.clone());
        }
        fs::create_dir_all(&coll)?;
        self.stats.loop_sessions += 1;
        if i % 25 == 12 {
            // A legacy v2 single file: header line, then the message lines.
            let mut data = serde_json::to_string(&header)
                .map_err(io::Error::other)?
                .into_bytes();
            data.push(b'\n');
            data.extend_from_slice(&body.bytes);
            return self.write(&coll.join(format!("{id}.jsonl")), &data);
        }
        self.write_v3(&coll.join(&id), header, &body)
    }

    fn write_v3(&mut self, dir: &Path, header: Value, body: &LoopBody) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        let generation = hex(&Sha256::digest(&body.bytes));
        let meta = json!({
            "format": "loop-session", "version": 3, "header": header,
            "generation": generation, "start": 0, "bytes": body.bytes.len(),
            "messageCount": body.count,
        });
        let rounds: Vec<Value> = body
            .rounds
            .iter()
            .map(|&(m, o)| json!({"messageIndex": m, "byteOffset": o}))
            .collect();
        let index = json!({"generation": generation, "rounds": rounds});
        self.write(&dir.join("meta.json"), pretty(&meta)?.as_bytes())?;
        self.write(&dir.join("messages.jsonl"), &body.bytes)?;
        self.write(&dir.join("index.json"), pretty(&index)?.as_bytes())
    }

    fn big_loop_session(&mut self, sessions: &Path, mb: usize) -> io::Result<String> {
        let cwd = cwd(0);
        let id = self.rng.uuid();
        let created = self.base_ms - 86_400_000;
        let mut body = LoopBody::new(created);
        let target = mb * 1024 * 1024;
        while body.bytes.len() < target || body.rounds.is_empty() {
            body.round(&mut self.rng, 200);
        }
        let header = json!({
            "format": "loop-session", "version": 2, "id": id, "cwd": cwd,
            "createdAt": iso_ms(created), "updatedAt": iso_ms(body.ts), "unread": false,
            "model": {"provider": "openai", "id": "gpt-5.5"},
            "title": {"text": format!("Big transcript ({mb} MiB)"), "source": "user", "messageIndices": []},
            "permissionPreset": "workspace-write",
        });
        self.stats.loop_sessions += 1;
        self.write_v3(&sessions.join(collection(&cwd)).join(&id), header, &body)?;
        Ok(id)
    }

    fn loom_session(&mut self, sessions: &Path, i: usize, rounds: usize) -> io::Result<()> {
        // Ids are local start times; stepping back >= 1 s per session keeps them unique.
        let start = BASE_MS - 3_600_000 - i as i64 * 37_000;
        let local = DateTime::<Utc>::from_timestamp_millis(start + 3_600_000).unwrap_or_default();
        let id = local.format("%Y%m%d-%H%M%S").to_string();
        let cwd = cwd(i);
        let mut out = String::new();
        let mut ts = start;
        let t = |ms: i64| jstr(&iso_secs(ms, 1));
        out += &format!(
            r#"{{"kind":"meta","time":{},"model":"qwen3-coder:30b","cwd":{}}}"#,
            t(ts),
            jstr(&cwd)
        );
        out += "\n";
        out += &format!(
            r#"{{"kind":"system","time":{},"message":{{"role":"system","content":{}}}}}"#,
            t(ts),
            jstr(&format!(
                "You are loom, a coding agent.\n\nEnvironment:\n- Working directory: {cwd}"
            ))
        );
        out += "\n";
        let mut read_bytes = None;
        for r in 0..rounds {
            if r + 1 == rounds && i.is_multiple_of(4) {
                read_bytes = Some(out.len()); // the last round arrived after the user last looked
            }
            ts += 60_000 + self.rng.below(600_000) as i64;
            let msg = |role: &str, content: &str, extra: &str| {
                format!(r#"{{"role":"{role}","content":{}{extra}}}"#, jstr(content))
            };
            let user = self.rng.sentence(4, 20);
            let cmd =
                COMMANDS[self.rng.below(COMMANDS.len() as u64) as usize].replace('&', "\\u0026"); // Go's encoder escapes & < >
            let tool_out = self.rng.sentence(5, 60);
            let reply = self.rng.sentence(20, 40);
            let lines = [
                msg("user", &user, ""),
                msg(
                    "assistant",
                    "",
                    &format!(
                        r#","tool_calls":[{{"function":{{"name":"bash","arguments":{{"command":"{cmd}"}}}}}}]"#
                    ),
                ),
                msg("tool", &tool_out, r#","tool_name":"bash""#),
                msg("assistant", &reply, ""),
            ];
            for m in lines {
                ts += 1_000 + self.rng.below(15_000) as i64;
                out += &format!(r#"{{"kind":"message","time":{},"message":{m}}}"#, t(ts));
                out += "\n";
            }
        }
        self.write(&sessions.join(format!("{id}.jsonl")), out.as_bytes())?;
        if i.is_multiple_of(20) || read_bytes.is_some() {
            let pinned = if i.is_multiple_of(20) {
                json!(iso_secs(ts + 60_000, 0))
            } else {
                Value::Null
            };
            let sidecar = json!({
                "version": 1, "pinned_at": pinned, "archived_at": null, "title": null,
                "read_bytes": read_bytes.unwrap_or(out.len()), "read_at": iso_secs(ts, 0),
            });
            let body = sidecar.to_string() + "\n";
            self.write(
                &sessions.join(".spool").join(format!("{id}.json")),
                body.as_bytes(),
            )?;
        }
        self.stats.loom_sessions += 1;
        Ok(())
    }

    fn harness_session(&mut self, sessions: &Path, i: usize, rounds: usize) -> io::Result<()> {
        let id = self.rng.harness_id();
        let cwd = cwd(i);
        let created = self.start_ms(i);
        let mut ts = created;
        let mut msgs = vec![json!({
            "role": "system",
            "content": format!("You are a capable coding and research assistant.\n\n## Project\n\nProject root: {cwd}"),
        })];
        for r in 0..rounds {
            ts += 60_000 + self.rng.below(600_000) as i64;
            let call = format!("call_{r:03}{}", &self.rng.harness_id()[..3]);
            let cmd = COMMANDS[self.rng.below(COMMANDS.len() as u64) as usize];
            msgs.push(json!({"role": "user",
                "content": format!("<user_input>\n{}\n</user_input>", self.rng.sentence(4, 20))}));
            msgs.push(json!({"role": "assistant", "tool_calls": [{"id": call,
                "function": {"arguments": json!({"command": cmd}).to_string().replace("\":\"", "\": \""),
                             "name": "run_bash"}, "type": "function"}]}));
            msgs.push(json!({"role": "tool", "tool_call_id": call,
                "content": format!("<tool_result name=\"run_bash\">\n{}\n</tool_result>", self.rng.sentence(5, 60))}));
            msgs.push(json!({"content": self.rng.sentence(20, 40), "role": "assistant"}));
        }
        let count = msgs.len();
        let record = json!({
            "id": id, "created_at": iso_secs(created, 0).replace('Z', "+00:00"),
            "updated_at": iso_secs(ts, 0).replace('Z', "+00:00"),
            "summary": self.rng.sentence(8, 24), "messages": msgs.clone(), "transcript": msgs,
            "title": "", "archived": i % 15 == 7,
            "state": {"scratchpad": "", "todos": [], "tool_calls": rounds, "total_tokens_in": 1200 * rounds,
                      "total_tokens_out": 90 * rounds, "total_cost_usd": 0.0, "calls": 2 * rounds},
            "compactions": [], "project_root": cwd, "status": "saved",
        });
        self.write(
            &sessions.join(format!("{id}.json")),
            pretty(&record)?.as_bytes(),
        )?;
        self.write(&sessions.join(format!("{id}.lock")), b"")?;
        if i.is_multiple_of(15) {
            let len = count.saturating_sub(if i.is_multiple_of(30) { 4 } else { 0 });
            let sidecar = json!({"version": 1, "pinned_at": iso_secs(ts + 5_000, 0),
                                 "read_transcript_len": len, "read_at": iso_secs(ts, 0)});
            let body = sidecar.to_string() + "\n";
            self.write(
                &sessions.join(".spool").join(format!("{id}.json")),
                body.as_bytes(),
            )?;
        }
        self.stats.harness_sessions += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
