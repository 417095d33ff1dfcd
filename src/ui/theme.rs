//! Colours: a dark default, a light theme, and a monochrome one when `NO_COLOR` is set
//! (modifiers only). Widgets ask the theme for styles by role, never hard-code colours.

use ratatui::style::{Color, Modifier, Style};

use crate::app::doc::Tone;
use crate::model::StoreKind;

/// Every style the widgets use.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub base: Style,
    pub dim: Style,
    pub title: Style,
    /// The selected row's background while the list has the keyboard.
    pub selected: Style,
    /// The selected row while the pane has the keyboard (still visible, quieter).
    pub selected_idle: Style,
    /// The gutter bar `▌` beside the selected row (marks it without colour too).
    pub pointer: Style,
    /// The border under the focused part, and its title.
    pub border_focus: Style,
    pub focus_title: Style,
    pub matched: Style,
    pub unread: Style,
    pub pin: Style,
    pub error: Style,
    pub warn: Style,
    pub border: Style,
    pub status: Style,
    pub user: Style,
    pub assistant: Style,
    pub tool: Style,
    pub virt: Style,
    pub heading: Style,
    /// Diff lines an edit adds and removes.
    pub added: Style,
    pub removed: Style,
    pub stores: [Style; 6],
}

impl Theme {
    pub fn dark() -> Theme {
        let fg = |c| Style::new().fg(c);
        let accent = Color::Rgb(97, 175, 239);
        Theme {
            base: Style::new(),
            // Readable on dark backgrounds (ANSI dark grey nearly vanishes on many).
            dim: fg(Color::Rgb(150, 156, 168)),
            title: Style::new().add_modifier(Modifier::BOLD),
            // Brighter than One Dark's own background (40, 44, 52), so it shows there too.
            selected: Style::new().bg(Color::Rgb(62, 68, 81)),
            selected_idle: Style::new().bg(Color::Rgb(50, 54, 62)),
            pointer: fg(accent).add_modifier(Modifier::BOLD),
            border_focus: fg(accent),
            focus_title: fg(accent).add_modifier(Modifier::BOLD),
            matched: fg(Color::Yellow).add_modifier(Modifier::BOLD),
            unread: fg(Color::Cyan),
            pin: fg(Color::Magenta),
            error: fg(Color::Red),
            warn: fg(Color::Yellow),
            border: fg(Color::DarkGray),
            status: Style::new().bg(Color::Rgb(30, 30, 30)).fg(Color::Gray),
            user: fg(Color::Green).add_modifier(Modifier::BOLD),
            assistant: fg(Color::Blue).add_modifier(Modifier::BOLD),
            tool: fg(Color::Cyan),
            virt: fg(Color::Magenta).add_modifier(Modifier::ITALIC),
            heading: Style::new().add_modifier(Modifier::BOLD),
            added: fg(Color::Green),
            removed: fg(Color::Red),
            stores: [
                fg(Color::Green),
                fg(Color::Blue),
                fg(Color::Yellow),
                fg(Color::LightRed),
                fg(Color::LightCyan),
                fg(Color::LightMagenta),
            ],
        }
    }

    pub fn light() -> Theme {
        let fg = |c| Style::new().fg(c);
        let accent = Color::Rgb(0, 90, 180);
        Theme {
            // ANSI 7 (Gray) is near invisible on a light background; a dark grey reads.
            dim: fg(Color::Rgb(96, 100, 110)),
            selected: Style::new().bg(Color::Rgb(196, 214, 240)),
            selected_idle: Style::new().bg(Color::Rgb(226, 230, 236)),
            pointer: fg(accent).add_modifier(Modifier::BOLD),
            border: fg(Color::Rgb(150, 150, 150)),
            border_focus: fg(accent),
            focus_title: fg(accent).add_modifier(Modifier::BOLD),
            matched: fg(Color::Red).add_modifier(Modifier::BOLD),
            unread: fg(Color::Blue),
            // Yellow and cyan wash out on white.
            warn: fg(Color::Rgb(150, 95, 0)),
            tool: fg(Color::Rgb(0, 115, 135)),
            status: Style::new().bg(Color::Rgb(230, 230, 230)).fg(Color::Black),
            assistant: fg(Color::Blue).add_modifier(Modifier::BOLD),
            stores: [
                fg(Color::Green),
                fg(Color::Blue),
                fg(Color::Magenta),
                fg(Color::Red),
                fg(Color::Rgb(0, 115, 135)),
                fg(Color::Rgb(130, 40, 160)),
            ],
            ..Theme::dark()
        }
    }

    /// `NO_COLOR`: no colours at all, structure shown by modifiers.
    pub fn mono() -> Theme {
        let plain = Style::new();
        let bold = plain.add_modifier(Modifier::BOLD);
        Theme {
            base: plain,
            dim: plain.add_modifier(Modifier::DIM),
            title: bold,
            selected: plain.add_modifier(Modifier::REVERSED),
            selected_idle: bold,
            pointer: bold,
            border_focus: bold,
            focus_title: bold.add_modifier(Modifier::REVERSED),
            matched: bold.add_modifier(Modifier::UNDERLINED),
            unread: bold,
            pin: bold,
            error: bold,
            warn: bold,
            border: plain,
            status: plain.add_modifier(Modifier::REVERSED),
            user: bold,
            assistant: bold,
            tool: plain,
            virt: plain.add_modifier(Modifier::ITALIC),
            heading: bold,
            // The `+` / `-` at the start of each line carries the meaning without colour.
            added: plain,
            removed: plain,
            stores: [plain; 6],
        }
    }

    /// The theme named in the config (`dark`, `light`), or mono when `no_color`.
    pub fn named(name: &str, no_color: bool) -> Theme {
        if no_color {
            return Theme::mono();
        }
        match name {
            "light" => Theme::light(),
            _ => Theme::dark(),
        }
    }

    /// Whether `NO_COLOR` asks for no colour (set and not empty).
    pub fn no_color_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }

    pub fn tone(&self, t: Tone) -> Style {
        match t {
            Tone::Plain => self.base,
            Tone::Dim => self.dim,
            Tone::User => self.user,
            Tone::Assistant => self.assistant,
            Tone::Tool => self.tool,
            Tone::Error => self.error,
            Tone::Virtual => self.virt,
            Tone::Warn => self.warn,
            Tone::Heading => self.heading,
            Tone::Added => self.added,
            Tone::Removed => self.removed,
            // Reversed, so a hit shows in every theme and with NO_COLOR.
            Tone::Hit => self.matched.add_modifier(Modifier::REVERSED),
            Tone::HitNow => self
                .focus_title
                .add_modifier(Modifier::REVERSED | Modifier::UNDERLINED),
        }
    }

    pub fn store(&self, k: StoreKind) -> Style {
        match k {
            StoreKind::Loop => self.stores[0],
            StoreKind::Loom => self.stores[1],
            StoreKind::Harness => self.stores[2],
            StoreKind::Claude => self.stores[3],
            StoreKind::Codex => self.stores[4],
            StoreKind::Pi => self.stores[5],
        }
    }
}
