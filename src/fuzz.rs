//! Entry points for the fuzz targets (`fuzz/`) and for their replay on stable
//! (`tests/fuzz_replay.rs`): each lays arbitrary bytes where a store reads them, in a scratch
//! store beside the contract fixtures, and drives the real readers (listing, transcript,
//! last rounds, window, raw). The property is "no panic, no hang"; the sanitiser's target
//! also checks that nothing terminal-unsafe survives it. Not an API: hidden from the docs.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store::{Roots, Span, Stores};

/// What the fuzzed bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A Loop v3 `meta.json` (beside the fixture's messages and round index).
    LoopMeta,
    /// A Loop v3 `index.json`.
    LoopIndex,
    /// A Loop v3 `messages.jsonl`, with a `meta.json` that commits exactly these bytes.
    LoopMessages,
    /// A whole legacy (v2) Loop session file.
    LoopLegacy,
    /// A loom log.
    LoomLog,
    /// An agent-harness record.
    HarnessRecord,
    /// A Claude Code transcript.
    ClaudeLog,
    /// A Codex rollout (`.jsonl`).
    CodexRollout,
    /// A Codex rollout, zstd-compressed (`.jsonl.zst`): the bytes are compressed first, so
    /// the fuzzer reaches the parser through the decoder rather than its magic check.
    CodexZst,
    /// A pi session file.
    PiSession,
    /// Text for the terminal sanitiser.
    Sanitize,
    /// A config file.
    Config,
}

impl Target {
    pub const ALL: [Target; 12] = [
        Target::LoopMeta,
        Target::LoopIndex,
        Target::LoopMessages,
        Target::LoopLegacy,
        Target::LoomLog,
        Target::HarnessRecord,
        Target::ClaudeLog,
        Target::CodexRollout,
        Target::CodexZst,
        Target::PiSession,
        Target::Sanitize,
        Target::Config,
    ];

    /// The name of the fuzz target (and of its folders under `fuzz/corpus/` and
    /// `fuzz/artifacts/`).
    pub fn name(self) -> &'static str {
        match self {
            Target::LoopMeta => "loop_meta",
            Target::LoopIndex => "loop_index",
            Target::LoopMessages => "loop_messages",
            Target::LoopLegacy => "loop_legacy",
            Target::LoomLog => "loom_log",
            Target::HarnessRecord => "harness_record",
            Target::ClaudeLog => "claude_log",
            Target::CodexRollout => "codex_rollout",
            Target::CodexZst => "codex_zst",
            Target::PiSession => "pi_session",
            Target::Sanitize => "sanitize",
            Target::Config => "config",
        }
    }
}

const COLLECTION: &str = "767af75ec9c3c6ac7b4a00e5";
const LOOP_ID: &str = "3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c";
const LEGACY_ID: &str = "e9d4a6b1-2f3c-4d5e-8a7b-6c5d4e3f2a1b";
const CODEX_ROLLOUT: &str =
    "sessions/2026/03/14/rollout-2026-03-14T10-15-02-019ceba0-ae55-7d10-9f2a-4b8e6c1d2a30.jsonl";
const PI_SESSION: &str = "--home-user-projects-tinyhttp--/\
     2026-03-14T09-15-02-101Z_019ceba0-ae56-7f60-8a1b-2c3d4e5f6a7b.jsonl";
const LOOP_META: &str = include_str!(
    "../tests/fixtures/loop/sessions/767af75ec9c3c6ac7b4a00e5/3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/meta.json"
);
const LOOP_INDEX: &str = include_str!(
    "../tests/fixtures/loop/sessions/767af75ec9c3c6ac7b4a00e5/3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/index.json"
);
const LOOP_MESSAGES: &str = include_str!(
    "../tests/fixtures/loop/sessions/767af75ec9c3c6ac7b4a00e5/3f6b2c1e-8a4d-4e2f-9b7c-1d2e3f4a5b6c/messages.jsonl"
);

/// Run one input through `target`'s readers. Panics only where the code under test does.
pub fn run(target: Target, data: &[u8]) {
    match target {
        Target::Sanitize => sanitize(data),
        Target::Config => {
            let _ = crate::config::Config::parse(&String::from_utf8_lossy(data), "fuzz");
        }
        _ => {
            let dir = tempfile::tempdir().expect("a scratch directory");
            let roots = Roots::all_in(dir.path());
            if lay_out(target, &roots, data).is_ok() {
                read_everything(&Stores::open(&roots));
            }
        }
    }
}

/// The sanitiser's property: whatever goes in, no escape, control (but newline) or C1
/// character comes out.
fn sanitize(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    let out = crate::text::sanitize(&s);
    for c in out.chars() {
        assert!(
            c == '\n' || !(c.is_control() || crate::text::terminal_unsafe(c)),
            "the sanitiser let {:?} through",
            c
        );
    }
    let _ = crate::text::one_line(&s);
}

fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes)
}

fn loop_session(roots: &Roots, id: &str) -> PathBuf {
    roots.loop_dir.join("sessions").join(COLLECTION).join(id)
}

/// Put `data` where `target` reads it; the other files are the fixture's.
fn lay_out(target: Target, roots: &Roots, data: &[u8]) -> std::io::Result<()> {
    let session = loop_session(roots, LOOP_ID);
    match target {
        Target::LoopMeta => {
            write(&session.join("meta.json"), data)?;
            write(&session.join("index.json"), LOOP_INDEX.as_bytes())?;
            write(&session.join("messages.jsonl"), LOOP_MESSAGES.as_bytes())
        }
        Target::LoopIndex => {
            write(&session.join("meta.json"), LOOP_META.as_bytes())?;
            write(&session.join("index.json"), data)?;
            write(&session.join("messages.jsonl"), LOOP_MESSAGES.as_bytes())
        }
        Target::LoopMessages => {
            write(&session.join("meta.json"), &committing_meta(data))?;
            write(&session.join("messages.jsonl"), data)
        }
        Target::LoopLegacy => write(
            &roots
                .loop_dir
                .join("sessions")
                .join(COLLECTION)
                .join(format!("{LEGACY_ID}.jsonl")),
            data,
        ),
        Target::LoomLog => write(&roots.loom_dir.join("sessions/20260314-091502.jsonl"), data),
        Target::HarnessRecord => write(
            &roots.harness_dir.join("sessions/Qm3xT8vLk2pR9aZc.json"),
            data,
        ),
        Target::ClaudeLog => write(
            &roots.claude_dir.join(
                "projects/-home-user-projects-tinyhttp/5b0f6c1e-8d52-4c3a-9a41-2f7d3e9b6a10.jsonl",
            ),
            data,
        ),
        Target::CodexRollout => write(&roots.codex_dir.join(CODEX_ROLLOUT), data),
        Target::CodexZst => write(
            &roots.codex_dir.join(format!("{CODEX_ROLLOUT}.zst")),
            &zstd::encode_all(data, 1)?,
        ),
        Target::PiSession => write(&roots.pi_dir.join(PI_SESSION), data),
        Target::Sanitize | Target::Config => Ok(()),
    }
}

/// The fixture's `meta.json` committing exactly `messages` (generation, bytes, count), so
/// the fuzzed lines get past the range check into the parsers.
fn committing_meta(messages: &[u8]) -> Vec<u8> {
    let mut meta: Value = serde_json::from_str(LOOP_META).expect("the fixture is JSON");
    let generation = crate::hex::encode(&Sha256::digest(messages));
    let count = messages.iter().filter(|&&b| b == b'\n').count();
    meta["generation"] = generation.into();
    meta["bytes"] = messages.len().into();
    meta["messageCount"] = count.into();
    serde_json::to_vec_pretty(&meta).expect("JSON")
}

/// Every reader on every session the stores list (also `tests/hostile.rs`'s exercise).
pub fn read_everything(stores: &Stores) {
    for s in stores.list_all() {
        let store = stores.store_for(&s);
        let _ = store.transcript(&s.id, Span::All);
        let _ = store.transcript(&s.id, Span::LastRounds(1));
        let _ = store.window(&s.id);
        let _ = store.raw(&s.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each store's target puts its seed where that store lists it: a wrong path would
    /// leave the fuzzer exercising an empty store.
    #[test]
    fn every_store_target_lays_its_seed_where_the_store_lists_it() {
        let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        for t in Target::ALL {
            if matches!(t, Target::Sanitize | Target::Config) {
                continue;
            }
            let seed = std::fs::read(fuzz.join(t.name()).join(match t {
                Target::LoopMeta | Target::LoopIndex | Target::HarnessRecord => "seed-1.json",
                _ => "seed-1.jsonl",
            }))
            .unwrap();
            let dir = tempfile::tempdir().unwrap();
            let roots = Roots::all_in(dir.path());
            lay_out(t, &roots, &seed).unwrap();
            let rows = Stores::open(&roots).list_all();
            assert_eq!(rows.len(), 1, "{}: {rows:?}", t.name());
            assert_eq!(rows[0].error(), None, "{}", t.name());
        }
    }
}
