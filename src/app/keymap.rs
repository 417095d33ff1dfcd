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
    /// The help overlay is open.
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
    ("view", "cycle transcript / window / raw", &["v"]),
    ("expand", "expand/collapse in view", &["o"]),
    ("expand-all", "expand/collapse all", &["O"]),
    ("sidebar-narrower", "narrower sidebar", &["<"]),
    ("sidebar-wider", "wider sidebar", &[">"]),
    ("help", "this help", &["?"]),
    ("quit", "quit", &["q", "ctrl-c"]),
    ("search", "search", &["/"]),
    ("archived", "archived view on/off", &["."]),
    ("empty", "show empty sessions on/off", &["E"]),
    ("cwd", "this directory's project / all", &["c"]),
    ("store", "cycle store: all/loop/loom/harness", &["F"]),
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
        "quit" => Action::Quit,
        "search" => Action::FocusSearch,
        "archived" => Action::ToggleArchived,
        "empty" => Action::ToggleEmpty,
        "cwd" => Action::ToggleCwd,
        "store" => Action::CycleStore,
        // Dialog commands (bound in the confirm and prompt contexts only).
        "accept" => Action::DialogAccept,
        "cancel" => Action::DialogCancel,
        "edit-backspace" => Action::DialogEdit(Edit::Backspace),
        "edit-delete" => Action::DialogEdit(Edit::Delete),
        "edit-left" => Action::DialogEdit(Edit::Left),
        "edit-right" => Action::DialogEdit(Edit::Right),
        "edit-home" => Action::DialogEdit(Edit::Home),
        "edit-end" => Action::DialogEdit(Edit::End),
        "edit-clear" => Action::DialogEdit(Edit::Clear),
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
        ] {
            push(&mut bindings, Ctx::Search, k, name);
        }
        for (k, name) in [
            ("esc", "help"),
            ("?", "help"),
            ("q", "help"),
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
            ("backspace", "edit-backspace"),
            ("delete", "edit-delete"),
            ("left", "edit-left"),
            ("right", "edit-right"),
            ("home", "edit-home"),
            ("end", "edit-end"),
            ("ctrl-a", "edit-home"),
            ("ctrl-e", "edit-end"),
            ("ctrl-u", "edit-clear"),
            ("tab", "format-next"),
            ("backtab", "format-prev"),
        ] {
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
            (Ctx::Search, KeyCode::Backspace) => Some(Action::SearchBackspace),
            (Ctx::Search, KeyCode::Char(c)) if !chord.ctrl && !chord.alt => {
                Some(Action::SearchInput(c))
            }
            (Ctx::Prompt, KeyCode::Char(c)) if !chord.ctrl && !chord.alt => {
                Some(Action::DialogEdit(Edit::Insert(c)))
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

    /// Help rows: keys (joined) and description for every command, in table order.
    pub fn help_rows(&self) -> Vec<(String, &'static str)> {
        COMMANDS
            .iter()
            .map(|(name, desc, _)| {
                let keys: Vec<String> = self
                    .bindings
                    .iter()
                    .filter(|b| b.ctx == Ctx::Browse && b.name == *name)
                    .map(|b| b.chord.label())
                    .collect();
                (keys.join(" "), *desc)
            })
            .collect()
    }
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
