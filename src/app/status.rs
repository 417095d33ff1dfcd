//! The status message: the one-line answer to a key press in the footer. It lasts until the
//! next key or `STATUS_TTL` of the app's clock (so tests move the clock instead of
//! sleeping), then the key hints come back; every message also goes to a log of the last
//! `LOG_LEN` that `m` shows in full.

use chrono::{DateTime, Duration, Utc};

use super::App;
use super::overlay::LOG_LEN;

/// How long a status message stays in the footer.
pub const STATUS_TTL: Duration = Duration::seconds(5);

impl App {
    /// Record a status message that appeared during one update (whoever set `status`):
    /// stamp it with the clock and add it to the log.
    pub(super) fn note_status(&mut self, before: Option<String>) {
        if self.status.is_none() || self.status == before {
            return;
        }
        self.status_at = self.now;
        if let Some(m) = &self.status {
            if self.log.len() == LOG_LEN {
                self.log.pop_front();
            }
            self.log.push_back(m.clone());
        }
    }

    /// Drop the message once it has been shown for `STATUS_TTL`.
    pub(super) fn expire_status(&mut self) {
        if self.status.is_some() && self.now >= self.status_at + STATUS_TTL {
            self.status = None;
        }
    }

    /// When the footer changes by itself next (the run loop wakes up then).
    pub fn status_deadline(&self) -> Option<DateTime<Utc>> {
        self.status.as_ref().map(|_| self.status_at + STATUS_TTL)
    }
}
