//! The `spool` binary: parse the command line, pick the stores, hand off to the CLI or the
//! browser, and turn errors into one sentence on stderr with the contract's exit code.

use clap::Parser;

use spool::cli::{Cli, StoreArgs};
use spool::config::Config;
use spool::error::Error;
use spool::store::{Roots, Stores};

spool::allocator!();

fn main() {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => std::process::exit(code),
        // The reader of a pipe went away (`spool list | head -1`): it has what it wanted.
        Err(e) if e.is_broken_pipe() => std::process::exit(0),
        Err(e) => {
            spool::cli::note(&format!("spool: {e}"));
            std::process::exit(e.exit_code());
        }
    }
}

fn run(cli: Cli) -> Result<i32, Error> {
    // The browser's index child: its stores come from its arguments, not the config.
    if let Some(spool::cli::Command::Index(a)) = &cli.command {
        return Ok(spool::index_child::run(a));
    }
    // The demo copy lives until the process exits; a signal removes it too.
    let demo = if cli.stores.demo {
        let d = spool::demo::DemoStore::create()?;
        spool::hints::use_cache_dir(d.cache_dir());
        spool::tui::handle_exit_signals().map_err(|e| Error::io("watching", "signals", e))?;
        Some(d)
    } else {
        None
    };
    let config = Config::load(cli.stores.config.as_deref())?;
    let roots = roots(&cli.stores, demo.as_ref().map(|d| d.roots()));
    let mut stores = Stores::open(&roots);
    if demo.is_none() {
        config.add_roots(&mut stores);
    }
    match cli.command {
        Some(cmd) => {
            // The demo's index dies with its temporary copy instead of piling up in the cache.
            let index_dir = demo.as_ref().map(|d| d.path().join("index"));
            spool::cli::run(
                cmd,
                &stores,
                &config.resume.commands(),
                index_dir.as_deref(),
            )
        }
        None => {
            color_eyre::install().map_err(|e| Error::Refused(e.to_string()))?;
            spool::browser::run(stores, config).map_err(|e| Error::Refused(format!("{e:#}")))?;
            Ok(0)
        }
    }
}

fn roots(args: &StoreArgs, demo: Option<Roots>) -> Roots {
    let mut r = demo.unwrap_or_else(Roots::from_env);
    let abs = |p: &std::path::PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    if let Some(p) = &args.loop_dir {
        r.loop_dir = abs(p);
    }
    if let Some(p) = &args.loom_dir {
        r.loom_dir = abs(p);
    }
    if let Some(p) = &args.claude_dir {
        r.claude_dir = abs(p);
    }
    if let Some(p) = &args.codex_dir {
        r.codex_dir = abs(p);
    }
    if let Some(p) = &args.pi_dir {
        r.pi_dir = abs(p);
    }
    if let Some(p) = &args.harness_dir {
        r.harness_dir = abs(p);
    }
    r
}
