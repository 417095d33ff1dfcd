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
