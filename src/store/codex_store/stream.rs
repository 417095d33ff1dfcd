//! The streamed views of a rollout (issues 9 and 11): `show`, the pane's transcript, the
//! replayed window and the indexer read the rollout in passes of one record at a time (a
//! `.jsonl.zst` through the stream decoder each time) and never hold its records. A first
//! pass learns what converting needs from further on (whether prompts come from events, the
//! last compaction, the end of a fork's copied prefix, the read warnings), a second counts
//! rounds and pairs calls with results, the third sends each entry once it is complete.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;

use serde_json::Value;

use super::read::{self, Parsed};
use super::record as r;
use super::transcript::{self, Conv, Ctx};
use crate::model::{Entry, Message, Role};

/// What the first pass learns.
#[derive(Default)]
pub struct Scan {
    /// Record positions of the first and last `user_message` events.
    pub first_prompt: Option<usize>,
    pub last_prompt: Option<usize>,
    pub last_compaction: Option<usize>,
    /// The copied prefix of a fork (`listing::copied_range` over the stream).
    pub copied: Option<(usize, usize)>,
    pub parsed: Parsed,
}

/// The first pass. `copy_start` and `turns` are the listing's fork start and the parent's
/// turn ids: the copied prefix ends at the first turn the parent did not record.
pub fn scan(
    path: &Path,
    copy_start: Option<usize>,
    turns: Option<&HashSet<String>>,
) -> io::Result<Scan> {
    let mut sc = Scan::default();
    let mut end = None;
    let mut i = 0;
    sc.parsed = read::stream(path, u64::MAX, &mut |v| {
        if transcript::is_event_prompt(&v) {
            sc.first_prompt.get_or_insert(i);
            sc.last_prompt = Some(i);
        }
        match r::kind(&v) {
            "compacted" => sc.last_compaction = Some(i),
            "turn_context" => {
                if let (Some(start), Some(turns), None) = (copy_start, turns, end)
                    && i >= start
                    && r::s(r::payload(&v), "turn_id").is_none_or(|t| !turns.contains(t))
                {
                    end = Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    })?;
    if let (Some(start), Some(_)) = (copy_start, turns) {
        sc.copied = Some((start, end.unwrap_or(i).max(start)));
    }
    Ok(sc)
}

/// Numbering and pairing of entries as they are sent (`entries::number` and `entries::pair`
/// over a whole transcript): the calls and results are learnt in the counting pass.
#[derive(Default)]
pub struct Pairing {
    pub next: usize,
    names: HashMap<String, String>,
    answered: HashSet<String>,
}

impl Pairing {
    pub fn learn(&mut self, e: &Entry) {
        if let Entry::Message(m) = e {
            for c in &m.tool_calls {
                self.names.insert(c.id.clone(), c.name.clone());
            }
            if let Some(id) = &m.tool_call_id {
                self.answered.insert(id.clone());
            }
        }
    }

    pub fn apply(&mut self, e: &mut Entry) {
        let Entry::Message(m) = e else {
            return;
        };
        if !m.is_virtual {
            m.index = Some(self.next);
            self.next += 1;
        }
        if let Some(id) = &m.tool_call_id {
            m.tool_name = self.names.get(id).cloned();
        }
        let open = m
            .tool_calls
            .iter()
            .any(|c| transcript::expects_result(&c.name) && !self.answered.contains(&c.id));
        if open && m.note.is_none() {
            m.note = Some("no result (interrupted or still running)".into());
        }
    }
}

/// One pass converting the whole rollout: unnumbered, unpaired entries to `out`.
pub fn convert(path: &Path, sc: &Scan, cx: &Ctx, out: &mut dyn FnMut(Entry)) -> io::Result<()> {
    let mut conv = Conv::new(cx, sc.first_prompt.is_some());
    read::stream(path, sc.parsed.size, &mut |v| conv.feed(&v, out))?;
    conv.finish(out);
    Ok(())
}

/// One pass of the window (`view::window`, a record at a time): the messages of the records
/// before the last compaction are counted (their number starts the window's positions,
/// returned), the compaction's replayed messages go to `out` with `true`, and the entries
/// after it, unnumbered and unpaired, with `false`. `count_before`: the numbering pass.
pub fn window_pass(
    path: &Path,
    sc: &Scan,
    tail_cx: &Ctx,
    count_before: bool,
    out: &mut dyn FnMut(Entry, bool),
) -> io::Result<usize> {
    let k = sc.last_compaction;
    let pre_cx = Ctx::default();
    let pre_prompts = match (k, sc.first_prompt) {
        (Some(k), Some(p)) => p < k,
        _ => false,
    };
    let mut pre = k
        .filter(|_| count_before)
        .map(|_| Conv::new(&pre_cx, pre_prompts));
    let tail_prompts = match k {
        Some(k) => sc.last_prompt.is_some_and(|p| p > k),
        None => sc.first_prompt.is_some(),
    };
    let mut tail = Conv::new(tail_cx, tail_prompts);
    let mut before = 0;
    let mut i = 0;
    read::stream(path, sc.parsed.size, &mut |v| {
        let at = i;
        i += 1;
        let mut count = |e: Entry| before += usize::from(matches!(e, Entry::Message(_)));
        match k {
            Some(k) if at < k => {
                if let Some(c) = pre.as_mut() {
                    c.feed(&v, &mut count);
                }
            }
            Some(k) if at == k => {
                if let Some(c) = pre.take() {
                    c.finish(&mut count);
                }
                for m in replayed(&v) {
                    out(Entry::Message(Box::new(m)), true);
                }
            }
            _ => tail.feed(&v, &mut |e| out(e, false)),
        }
    })?;
    tail.finish(&mut |e| out(e, false));
    Ok(before)
}

/// The messages a compaction record puts back: its `replacement_history`, else its summary.
pub fn replayed(rec: &Value) -> Vec<Message> {
    let pl = r::payload(rec);
    match pl.get("replacement_history").and_then(|h| h.as_array()) {
        Some(items) => transcript::replacement(items),
        None => {
            let mut m = Message::inserted(Role::User, r::s(pl, "message").unwrap_or(""));
            m.timestamp = r::timestamp(rec);
            vec![m]
        }
    }
}
