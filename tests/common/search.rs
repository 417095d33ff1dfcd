//! `spool search` through the built binary, with HOME (and so the index) in a given
//! directory: shared by the search tests.

use std::path::Path;
use std::process::{Command, Output};

use super::json_lines;

/// Run spool with HOME (and so the cache) inside `home`.
pub fn spool(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spool"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("LOOP_DATA_DIR")
        .output()
        .expect("run spool")
}

pub fn search_json(home: &Path, extra: &[&str], q: &str) -> (i32, Vec<serde_json::Value>) {
    let mut args = extra.to_vec();
    args.extend(["search", "--all", "--json", q]);
    let out = spool(home, &args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), json_lines(&stdout))
}

/// The `ref` of each result row.
pub fn refs(rows: &[serde_json::Value]) -> Vec<&str> {
    rows.iter().map(|r| r["ref"].as_str().unwrap()).collect()
}

/// The browser's indexer over the index in `dir`, its children run as `exe`, handed `rows`
/// as the whole listing (as the browser does once a listing has streamed in); and where its
/// news arrives.
pub fn indexing(
    dir: &Path,
    stores: &std::sync::Arc<spool::store::Stores>,
    rows: &[spool::model::SessionSummary],
    exe: &str,
) -> (
    spool::indexer::Indexer,
    std::sync::mpsc::Receiver<spool::loader::Event>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let ix = spool::indexer::Indexer::start_with(
        Some(dir.to_path_buf()),
        stores.clone(),
        tx,
        Some(exe.into()),
    );
    ix.index_all(rows.iter().cloned().map(std::sync::Arc::new).collect());
    (ix, rx)
}
