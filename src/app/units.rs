//! Numbers and times as the browser writes them: `1,234` and relative ages.

use chrono::{DateTime, Utc};

/// `1234567` → `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Relative age: `now`, `5m`, `3h`, `2d`, `3w`, `4mo`, `2y`.
pub fn age(now: DateTime<Utc>, t: Option<DateTime<Utc>>) -> String {
    let Some(t) = t else { return "-".into() };
    let s = (now - t).num_seconds().max(0);
    match s {
        0..60 => "now".into(),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        86400..604800 => format!("{}d", s / 86400),
        604800..2592000 => format!("{}w", s / 604800),
        2592000..31536000 => format!("{}mo", s / 2592000),
        _ => format!("{}y", s / 31536000),
    }
}
