//! The config file (`<config dir>/spool/config.toml` or `--config FILE`): theme, key remaps,
//! extra store roots, default filters and resume commands. A missing file means defaults; a
//! bad file is one error sentence naming the line and the key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::app::Keymap;
use crate::error::{Error, Result};
use crate::model::StoreKind;
use crate::resume::ResumeCommands;
use crate::store::registry::{Filter, Stores};

/// The parsed settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// `dark` (default) or `light`.
    pub theme: String,
    pub sidebar_width: Option<u16>,
    /// Mark a session read once the pane has shown its last message (default true).
    pub mark_read_on_open: bool,
    /// The default keymap with the file's `[keys]` remaps applied (checked for conflicts).
    pub keymap: Keymap,
    /// Extra store roots per kind (`[roots]`), each an agent directory holding `sessions/`.
    pub roots: Vec<(StoreKind, PathBuf)>,
    pub filters: Filters,
    /// Resume command templates (`[resume]`), by store; not interpreted here.
    pub resume: Resume,
    /// The file the settings came from, when one was read.
    pub path: Option<PathBuf>,
}

/// `[filters]`: how the list starts.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Filters {
    pub archived: bool,
    pub empty: bool,
    /// Start with "this directory's project only".
    pub cwd: bool,
    /// `loop`, `loom`, `harness`, `claude` or `pi`.
    pub store: Option<String>,
}

/// `[resume]`: command strings per store.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Resume {
    #[serde(rename = "loop")]
    pub loop_: Option<String>,
    pub loom: Option<String>,
    pub harness: Option<String>,
    pub claude: Option<String>,
    /// Claude Code's fork command (spool does not write Claude's files; Claude forks).
    pub claude_fork: Option<String>,
    pub codex: Option<String>,
    /// Codex's fork command (Codex forks its own threads).
    pub codex_fork: Option<String>,
    pub pi: Option<String>,
    /// pi's fork command (`pi --fork <path>`: pi writes the new file).
    pub pi_fork: Option<String>,
}

impl Resume {
    pub fn for_store(&self, k: StoreKind) -> Option<&str> {
        match k {
            StoreKind::Loop => self.loop_.as_deref(),
            StoreKind::Loom => self.loom.as_deref(),
            StoreKind::Harness => self.harness.as_deref(),
            StoreKind::Claude => self.claude.as_deref(),
            StoreKind::Codex => self.codex.as_deref(),
            StoreKind::Pi => self.pi.as_deref(),
        }
    }

    /// The commands to use: the file's entries over the built-in defaults.
    pub fn commands(&self) -> ResumeCommands {
        let d = ResumeCommands::default();
        ResumeCommands {
            loop_cmd: self.loop_.clone().or(d.loop_cmd),
            loom_cmd: self.loom.clone().or(d.loom_cmd),
            harness_cmd: self.harness.clone().or(d.harness_cmd),
            claude_cmd: self.claude.clone().or(d.claude_cmd),
            claude_fork: self.claude_fork.clone().or(d.claude_fork),
            codex_cmd: self.codex.clone().or(d.codex_cmd),
            codex_fork: self.codex_fork.clone().or(d.codex_fork),
            pi_cmd: self.pi.clone().or(d.pi_cmd),
            pi_fork: self.pi_fork.clone().or(d.pi_fork),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct RootsFile {
    #[serde(rename = "loop")]
    loop_: Vec<PathBuf>,
    loom: Vec<PathBuf>,
    harness: Vec<PathBuf>,
    claude: Vec<PathBuf>,
    codex: Vec<PathBuf>,
    pi: Vec<PathBuf>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Keys {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct File {
    theme: Option<String>,
    sidebar_width: Option<u16>,
    mark_read_on_open: Option<bool>,
    keys: std::collections::BTreeMap<String, Keys>,
    roots: RootsFile,
    filters: Filters,
    resume: Resume,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: "dark".into(),
            sidebar_width: None,
            mark_read_on_open: true,
            keymap: Keymap::default(),
            roots: Vec::new(),
            filters: Filters::default(),
            resume: Resume::default(),
            path: None,
        }
    }
}

impl Config {
    /// `<config dir>/spool/config.toml` of the platform (XDG on Linux).
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "spool").map(|d| d.config_dir().join("config.toml"))
    }

    /// Read `path` (or the default path). A missing file gives the defaults.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        let Some(p) = path.map(Path::to_path_buf).or_else(Config::default_path) else {
            return Ok(Config::default());
        };
        // Through the regular-file reader: a FIFO as the config hung every command.
        let text = crate::store::regular::read(
            &p,
            crate::store::regular::META_CAP,
            crate::store::regular::Links::Follow,
        )
        .and_then(|b| String::from_utf8(b).map_err(|_| std::io::Error::other("not UTF-8")));
        match text {
            Ok(src) => {
                let mut c = Config::parse(&src, &p.display().to_string())?;
                c.path = Some(p);
                Ok(c)
            }
            // A file named on the command line that is not there is a mistake (a typo would
            // otherwise silently mean "defaults"); only the default file is optional.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && path.is_some() => Err(
                Error::Usage(format!("config file {} does not exist", p.display())),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(Error::io("read config", p, e)),
        }
    }

    /// Parse config text; `origin` names the file in errors.
    pub fn parse(src: &str, origin: &str) -> Result<Config> {
        let file: File = toml::from_str(src).map_err(|e| {
            let line = e.span().map(|s| line_of(src, s.start)).unwrap_or(1);
            let key = e
                .span()
                .and_then(|s| key_at(src, s.start))
                .map(|k| format!(", key `{k}`"))
                .unwrap_or_default();
            let msg = crate::text::collapse_whitespace(e.message());
            Error::Usage(format!("config {origin}: line {line}{key}: {msg}"))
        })?;
        let bad = |key: &str, what: String| {
            let line = find_key(src, key);
            Error::Usage(format!("config {origin}: line {line}, key `{key}`: {what}"))
        };
        let mut c = Config::default();
        if let Some(t) = file.theme {
            if t != "dark" && t != "light" {
                return Err(bad("theme", format!("unknown theme `{t}` (dark or light)")));
            }
            c.theme = t;
        }
        c.sidebar_width = file.sidebar_width;
        c.mark_read_on_open = file.mark_read_on_open.unwrap_or(true);
        for (name, keys) in file.keys {
            let keys = match keys {
                Keys::One(k) => vec![k],
                Keys::Many(v) => v,
            };
            c.keymap.remap(&name, &keys).map_err(|e| bad(&name, e))?;
        }
        if let Some(conflict) = c.keymap.conflicts().into_iter().next() {
            return Err(Error::Usage(format!("config {origin}: [keys]: {conflict}")));
        }
        for (kind, v) in [
            (StoreKind::Loop, file.roots.loop_),
            (StoreKind::Loom, file.roots.loom),
            (StoreKind::Harness, file.roots.harness),
            (StoreKind::Claude, file.roots.claude),
            (StoreKind::Codex, file.roots.codex),
            (StoreKind::Pi, file.roots.pi),
        ] {
            c.roots
                .extend(v.into_iter().map(|p| (kind, expand_home(&p))));
        }
        if let Some(s) = &file.filters.store
            && StoreKind::parse(s).is_none()
        {
            return Err(bad(
                "store",
                format!("unknown store `{s}` (loop, loom, harness, claude, codex or pi)"),
            ));
        }
        c.filters = file.filters;
        c.resume = file.resume;
        Ok(c)
    }

    /// The list filter to start with; `cwd` is the directory spool was started in.
    pub fn initial_filter(&self, cwd: Option<&str>) -> Filter {
        Filter {
            archived: self.filters.archived,
            empty: self.filters.empty,
            format: self.filters.store.as_deref().and_then(StoreKind::parse),
            cwd: if self.filters.cwd {
                cwd.map(str::to_string)
            } else {
                None
            },
            ..Filter::default()
        }
    }

    /// Add the extra roots to `stores`.
    pub fn add_roots(&self, stores: &mut Stores) {
        for (k, p) in &self.roots {
            stores.add(*k, p);
        }
    }
}

fn expand_home(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(h)) => PathBuf::from(h).join(rest),
        _ => p.to_path_buf(),
    }
}

fn line_of(src: &str, byte: usize) -> usize {
    src.as_bytes()[..byte.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key of the `key = value` line holding byte `at`.
fn key_at(src: &str, at: usize) -> Option<String> {
    let at = at.min(src.len());
    let start = src[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let end = src[start..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(src.len());
    let (k, _) = src[start..end].split_once('=')?;
    let k = k.trim().trim_matches('"');
    (!k.is_empty()).then(|| k.to_string())
}

/// First line that assigns `key` (1 when not found).
fn find_key(src: &str, key: &str) -> usize {
    src.lines()
        .position(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim().trim_matches('"') == key)
        })
        .map(|i| i + 1)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_file_parses() {
        let c = Config::parse(
            "theme = \"light\"\n[keys]\npin = \"P\"\nquit = [\"q\", \"ctrl-q\"]\n\
             [roots]\nloom = [\"/srv/loom\"]\n[filters]\nempty = true\nstore = \"loom\"\n\
             [resume]\nloom = \"loom resume {id}\"\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(c.theme, "light");
        assert_eq!(c.roots, vec![(StoreKind::Loom, PathBuf::from("/srv/loom"))]);
        assert_eq!(
            c.resume.for_store(StoreKind::Loom),
            Some("loom resume {id}")
        );
        assert_eq!(c.initial_filter(None).format, Some(StoreKind::Loom));
        assert!(c.initial_filter(None).empty);
        let pin: Vec<String> = c
            .keymap
            .bindings
            .iter()
            .filter(|b| b.name == "pin")
            .map(|b| b.chord.label())
            .collect();
        assert_eq!(pin, ["P"]);
    }

    #[test]
    fn a_missing_file_named_on_the_command_line_is_a_usage_error() {
        let e = Config::load(Some(Path::new("/nonexistent/spool/config.toml"))).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "config file /nonexistent/spool/config.toml does not exist"
        );
    }
}
