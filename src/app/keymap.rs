//! The keymap: a table (data) from (context, key) to `Action`. The config file can remap any
//! named command; `conflicts` finds keys bound twice in one context.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, Edit, SessionOp};

/// Where a key is pressed; the context decides which bindings apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ctx {
    /// List and pane (everything outside the search bar and help).
    Browse,
    /// Typing in the search bar: unbound printable keys type.
    Search,
    /// An overlay (help or the message log) is open: movement keys scroll it.
    Help,
    /// A yes/no dialog is open (delete confirmation).
    Confirm,
    /// A dialog with a text field is open (rename, export): unbound printable keys type.
    Prompt,
}

/// A key with modifiers, normalised (Shift is dropped for characters: `G` is `G`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chord {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Chord {
    pub fn from_event(e: &KeyEvent) -> Chord {
        Chord {
            code: e.code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    /// Parse `a`, `G`, `ctrl-u`, `alt-x`, `enter`, `esc`, `pgup`, `f1`, `space`, ...
    pub fn parse(s: &str) -> Option<Chord> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = s;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-") {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "delete" => KeyCode::Delete,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pgup" => KeyCode::PageUp,
            "pgdn" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "space" => KeyCode::Char(' '),
            f if f.len() > 1 && f.starts_with('f') => KeyCode::F(f[1..].parse().ok()?),
            c => {
                let mut it = c.chars();
                let ch = it.next()?;
                if it.next().is_some() {
                    return None;
                }
                KeyCode::Char(ch)
            }
        };
        Some(Chord { code, ctrl, alt })
    }

    /// The same spelling `parse` accepts.
    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.ctrl {
            s.push_str("ctrl-");
        }
        if self.alt {
            s.push_str("alt-");
        }
        let k = match self.code {
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "backtab".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::Delete => "delete".into(),
            KeyCode::Up => "up".into(),
            KeyCode::Down => "down".into(),
            KeyCode::Left => "left".into(),
            KeyCode::Right => "right".into(),
            KeyCode::PageUp => "pgup".into(),
            KeyCode::PageDown => "pgdn".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::Char(' ') => "space".into(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("f{n}"),
            other => format!("{other:?}").to_lowercase(),
        };
        s.push_str(&k);
        s
    }
}

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Binding {
    pub ctx: Ctx,
    pub chord: Chord,
    /// Command name (config files remap by it).
    pub name: &'static str,
    pub action: Action,
}

/// Named commands, their help text and default keys in the browse context.
/// Each description fits on one line of a help column at 140x40 (`HELP_DESC_MAX` columns):
/// a wrapped one makes the browse column taller than the screen, and the help scrolls.
/// The widest browse description that stays on one line in a third of a 140-column help.
pub const HELP_DESC_MAX: usize = 29;

pub const COMMANDS: &[(&str, &str, &[&str])] = &[
    ("down", "move down / scroll down", &["j", "down"]),
    ("up", "move up / scroll up", &["k", "up"]),
    ("top", "first row / top", &["g", "home"]),
    ("bottom", "last row / bottom", &["G", "end"]),
    ("page-down", "page down", &["pgdn"]),
    ("page-up", "page up", &["pgup"]),
    ("half-page-down", "half page down", &["ctrl-d"]),
    ("half-page-up", "half page up", &["ctrl-u"]),
    ("open", "open the session in the pane", &["enter"]),
    ("focus", "switch list / pane", &["tab"]),
    ("back", "back / close / clear search", &["esc"]),
    ("view", "transcript / window / raw", &["v"]),
    ("expand", "expand / collapse this block", &["o"]),
    ("expand-all", "expand / collapse every block", &["O"]),
    ("sidebar-narrower", "narrower sidebar", &["<"]),
    ("sidebar-wider", "wider sidebar", &[">"]),
    ("help", "this help", &["?"]),
    ("messages", "the last 50 messages in full", &["m"]),
    ("quit", "quit", &["q", "ctrl-c"]),
    ("search", "search titles / find in pane", &["/"]),
    ("text-search", "search every session's text", &["s"]),
    ("find-next", "next match in the pane", &["n"]),
    ("find-prev", "previous match in the pane", &["N"]),
    ("archived", "archived view on/off", &["."]),
    ("empty", "show empty sessions on/off", &["E"]),
    ("cwd", "this project only / all", &["c"]),
    ("store", "store: all, or one of six", &["F"]),
    ("inbox", "inbox: what needs you / all", &["i"]),
    ("left-off", "left-off card: full / brief", &["l"]),
    ("resume", "resume the session", &["r"]),
    ("fork", "fork the session", &["f"]),
    ("pin", "pin / unpin", &["p"]),
    ("unread", "mark unread / read", &["u"]),
    ("archive", "archive / unarchive", &["a"]),
    ("export", "export md / html / json", &["e"]),
    ("delete", "delete", &["d"]),
    ("rename", "rename", &["R"]),
    ("undo-delete", "undo delete", &["U"]),
];

/// What the commands bound outside the browse context do, for the help overlay (browse
/// commands are described in `COMMANDS`; a context can say it differently here).
const CONTEXT_HELP: &[(Option<Ctx>, &str, &str)] = &[
    (Some(Ctx::Search), "back", "clear, back to the list"),
    (Some(Ctx::Search), "down", "move the selection down"),
    (Some(Ctx::Search), "up", "move the selection up"),
    (Some(Ctx::Search), "focus", "switch to the pane"),
    (None, "accept", "confirm"),
    (None, "cancel", "cancel"),
    (None, "edit-backspace", "delete before the cursor"),
    (None, "edit-delete", "delete under the cursor"),
    (None, "edit-left", "cursor left"),
    (None, "edit-right", "cursor right"),
    (None, "edit-home", "cursor to the start"),
    (None, "edit-end", "cursor to the end"),
    (None, "edit-kill", "delete to the start"),
    (None, "edit-word", "delete the word before the cursor"),
    (None, "format-next", "next export format"),
    (None, "format-prev", "previous export format"),
];

/// Keys that edit a text field: the search box and the dialogs' fields share them.
const EDIT_KEYS: &[(&str, &str)] = &[
    ("backspace", "edit-backspace"),
    ("delete", "edit-delete"),
    ("left", "edit-left"),
    ("right", "edit-right"),
    ("home", "edit-home"),
    ("end", "edit-end"),
    ("ctrl-a", "edit-home"),
    ("ctrl-e", "edit-end"),
    ("ctrl-u", "edit-kill"),
    ("ctrl-w", "edit-word"),
    ("alt-backspace", "edit-word"),
];

/// The action a command name stands for.
pub fn command_action(name: &str) -> Option<Action> {
    Some(match name {
        "down" => Action::Down,
        "up" => Action::Up,
        "top" => Action::Top,
        "bottom" => Action::Bottom,
        "page-down" => Action::PageDown,
        "page-up" => Action::PageUp,
        "half-page-down" => Action::HalfPageDown,
        "half-page-up" => Action::HalfPageUp,
        "open" => Action::Open,
        "focus" => Action::ToggleFocus,
        "back" => Action::Back,
        "view" => Action::CycleView,
        "expand" => Action::ToggleExpand,
        "expand-all" => Action::ToggleExpandAll,
        "sidebar-narrower" => Action::ShrinkSidebar,
        "sidebar-wider" => Action::GrowSidebar,
        "help" => Action::ToggleHelp,
        "messages" => Action::ToggleMessages,
        "quit" => Action::Quit,
        "search" => Action::FocusSearch,
        "text-search" => Action::TextSearch,
        "find-next" => Action::FindNext,
        "find-prev" => Action::FindPrev,
        "archived" => Action::ToggleArchived,
        "empty" => Action::ToggleEmpty,
        "cwd" => Action::ToggleCwd,
        "store" => Action::CycleStore,
        "inbox" => Action::ToggleInbox,
        "left-off" => Action::ToggleCard,
        // Dialog commands (bound in the confirm and prompt contexts only).
        "accept" => Action::DialogAccept,
        "cancel" => Action::DialogCancel,
        "edit-backspace" => Action::Edit(Edit::Backspace),
        "edit-delete" => Action::Edit(Edit::Delete),
        "edit-left" => Action::Edit(Edit::Left),
        "edit-right" => Action::Edit(Edit::Right),
        "edit-home" => Action::Edit(Edit::Home),
        "edit-end" => Action::Edit(Edit::End),
        "edit-kill" => Action::Edit(Edit::KillToStart),
        "edit-word" => Action::Edit(Edit::DeleteWord),
        "format-next" => Action::DialogCycle(true),
        "format-prev" => Action::DialogCycle(false),
        other => Action::Session(SessionOp::ALL.into_iter().find(|o| o.name() == other)?),
    })
}

/// The whole table.
#[derive(Clone, Debug)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = Vec::new();
        for (name, _, keys) in COMMANDS {
            for k in *keys {
                push(&mut bindings, Ctx::Browse, k, name);
            }
        }
        // The search bar: printable keys type; these are the exceptions.
        for (k, name) in [
            ("esc", "back"),
            ("down", "down"),
            ("up", "up"),
            ("ctrl-n", "down"),
            ("ctrl-p", "up"),
            ("pgdn", "page-down"),
            ("pgup", "page-up"),
            ("tab", "focus"),
            ("ctrl-c", "quit"),
        ]
        .into_iter()
        .chain(EDIT_KEYS.iter().copied())
        {
            push(&mut bindings, Ctx::Search, k, name);
        }
        // Overlays (help, message log) scroll with the movement keys.
        for (k, name) in [
            ("esc", "back"),
            ("q", "back"),
            ("?", "help"),
            ("m", "messages"),
            ("j", "down"),
            ("down", "down"),
            ("k", "up"),
            ("up", "up"),
            ("pgdn", "page-down"),
            ("space", "page-down"),
            ("pgup", "page-up"),
            ("g", "top"),
            ("home", "top"),
            ("G", "bottom"),
            ("end", "bottom"),
            ("ctrl-c", "quit"),
        ] {
            push(&mut bindings, Ctx::Help, k, name);
        }
        for (k, name) in [
            ("y", "accept"),
            ("enter", "accept"),
            ("n", "cancel"),
            ("esc", "cancel"),
            ("ctrl-c", "cancel"),
        ] {
            push(&mut bindings, Ctx::Confirm, k, name);
        }
        // Text fields: printable keys type; these edit, confirm or cancel.
        for (k, name) in [
            ("enter", "accept"),
            ("esc", "cancel"),
            ("ctrl-c", "cancel"),
            ("tab", "format-next"),
            ("backtab", "format-prev"),
        ]
        .into_iter()
        .chain(EDIT_KEYS.iter().copied())
        {
            push(&mut bindings, Ctx::Prompt, k, name);
        }
        Keymap { bindings }
    }
}

fn push(v: &mut Vec<Binding>, ctx: Ctx, key: &str, name: &'static str) {
    // The defaults are literals checked by the conflict test; a typo would panic in tests.
    if let (Some(chord), Some(action)) = (Chord::parse(key), command_action(name)) {
        v.push(Binding {
            ctx,
            chord,
            name,
            action,
        });
    }
}

impl Keymap {
    /// The action for a key press in `ctx`. In the search bar, unbound characters type and
    /// Enter accepts the query.
    pub fn lookup(&self, ctx: Ctx, e: &KeyEvent) -> Option<Action> {
        let chord = Chord::from_event(e);
        if let Some(b) = self
            .bindings
            .iter()
            .find(|b| b.ctx == ctx && b.chord == chord)
        {
            return Some(b.action.clone());
        }
        match (ctx, chord.code) {
            (Ctx::Search, KeyCode::Enter) => Some(Action::SearchAccept),
            (Ctx::Search, KeyCode::Char(c)) if !chord.ctrl && !chord.alt => {
                Some(Action::SearchInput(c))
            }
            (Ctx::Prompt, KeyCode::Char(c)) if !chord.ctrl && !chord.alt => {
                Some(Action::Edit(Edit::Insert(c)))
            }
            _ => None,
        }
    }

    /// Replace the browse-context keys of command `name` (a config `[keys]` entry).
    pub fn remap(&mut self, name: &str, keys: &[String]) -> Result<(), String> {
        let (static_name, _, _) = COMMANDS
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| format!("unknown command `{name}`"))?;
        let action = command_action(name).ok_or_else(|| format!("unknown command `{name}`"))?;
        let mut chords = Vec::new();
        for k in keys {
            chords.push(Chord::parse(k).ok_or_else(|| format!("bad key `{k}` for `{name}`"))?);
        }
        self.bindings
            .retain(|b| !(b.ctx == Ctx::Browse && b.name == *static_name));
        for chord in chords {
            self.bindings.push(Binding {
                ctx: Ctx::Browse,
                chord,
                name: static_name,
                action: action.clone(),
            });
        }
        Ok(())
    }

    /// Keys bound to two different commands in one context, as sentences.
    pub fn conflicts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in self.bindings.iter().enumerate() {
            for b in &self.bindings[i + 1..] {
                if a.ctx == b.ctx && a.chord == b.chord && a.name != b.name {
                    out.push(format!(
                        "key `{}` is bound to both `{}` and `{}`",
                        a.chord.label(),
                        a.name,
                        b.name
                    ));
                }
            }
        }
        out
    }

    /// The first key bound to command `name` in the browse context (for hints that must
    /// follow a remap).
    pub fn key_for(&self, name: &str) -> Option<String> {
        self.bindings
            .iter()
            .find(|b| b.ctx == Ctx::Browse && b.name == name)
            .map(|b| b.chord.label())
    }

    /// Help rows of a context other than browse: command name, keys (joined) and what it
    /// does (`CONTEXT_HELP`, else `COMMANDS`), in binding order.
    pub fn context_rows(&self, ctx: Ctx) -> Vec<(&'static str, String, &'static str)> {
        let mut rows: Vec<(&'static str, Vec<String>)> = Vec::new();
        for b in self.bindings.iter().filter(|b| b.ctx == ctx) {
            match rows.iter_mut().find(|(n, _)| *n == b.name) {
                Some((_, keys)) => keys.push(b.chord.label()),
                None => rows.push((b.name, vec![b.chord.label()])),
            }
        }
        rows.into_iter()
            .map(|(name, keys)| (name, keys.join(" "), describe(ctx, name)))
            .collect()
    }

    /// Help rows: keys (joined) and description for every command, in table order.
    pub fn help_rows(&self) -> Vec<(&'static str, String, &'static str)> {
        COMMANDS
            .iter()
            .map(|(name, desc, _)| {
                let keys: Vec<String> = self
                    .bindings
                    .iter()
                    .filter(|b| b.ctx == Ctx::Browse && b.name == *name)
                    .map(|b| b.chord.label())
                    .collect();
                (*name, keys.join(" "), *desc)
            })
            .collect()
    }
}

/// What command `name` does in `ctx`, for the help overlay.
fn describe(ctx: Ctx, name: &str) -> &'static str {
    CONTEXT_HELP
        .iter()
        .find(|(c, n, _)| *n == name && c.is_none_or(|c| c == ctx))
        .map(|(_, _, d)| *d)
        .or_else(|| {
            COMMANDS
                .iter()
                .find(|(n, ..)| *n == name)
                .map(|(_, d, _)| *d)
        })
        // The test below checks the default table has none of these.
        .unwrap_or("(undocumented)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_keymap_has_no_conflicts_and_every_command_is_bound() {
        let k = Keymap::default();
        assert_eq!(k.conflicts(), Vec::<String>::new());
        for (name, _, keys) in COMMANDS {
            assert!(command_action(name).is_some(), "{name}");
            for key in *keys {
                assert!(Chord::parse(key).is_some(), "{key}");
            }
            assert!(k.bindings.iter().any(|b| b.name == *name), "{name} unbound");
        }
    }

    #[test]
    fn browse_descriptions_fit_one_help_line() {
        use unicode_width::UnicodeWidthStr;
        for (name, desc, _) in COMMANDS {
            assert!(desc.width() <= HELP_DESC_MAX, "{name}: {desc}");
        }
    }

    #[test]
    fn every_binding_in_every_context_is_described() {
        let k = Keymap::default();
        for ctx in [Ctx::Search, Ctx::Confirm, Ctx::Prompt] {
            for (name, keys, desc) in k.context_rows(ctx) {
                assert_ne!(desc, "(undocumented)", "{ctx:?} {name} {keys}");
            }
        }
    }

    #[test]
    fn remap_onto_a_used_key_is_a_conflict() {
        let mut k = Keymap::default();
        k.remap("pin", &["q".into()]).unwrap();
        assert_eq!(
            k.conflicts(),
            vec!["key `q` is bound to both `quit` and `pin`".to_string()]
        );
    }

    #[test]
    fn chords_round_trip() {
        for s in ["ctrl-u", "G", "pgdn", "f5", "space", "<"] {
            assert_eq!(Chord::parse(s).unwrap().label(), s);
        }
        assert!(Chord::parse("nope").is_none());
    }
}
