//! How the browser shows a time: to the minute everywhere (message headings, the pane
//! header), in local time. Tests use a fixed offset so snapshots do not depend on the
//! machine's time zone.

use chrono::{DateTime, FixedOffset, Local, Offset, Utc};

const FORMAT: &str = "%Y-%m-%d %H:%M";

/// The zone times are shown in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeFmt {
    /// `None`: the machine's local zone (per date, so DST is right).
    offset: Option<FixedOffset>,
}

impl TimeFmt {
    /// The machine's local time.
    pub fn local() -> TimeFmt {
        TimeFmt { offset: None }
    }

    /// A fixed zone (tests).
    pub fn fixed(offset: FixedOffset) -> TimeFmt {
        TimeFmt {
            offset: Some(offset),
        }
    }

    /// UTC (tests and `Options::new`).
    pub fn utc() -> TimeFmt {
        TimeFmt::fixed(FixedOffset::east_opt(0).unwrap_or_else(|| Utc.fix()))
    }

    /// `2026-03-20 09:04`.
    pub fn format(&self, t: DateTime<Utc>) -> String {
        match self.offset {
            Some(o) => t.with_timezone(&o).format(FORMAT).to_string(),
            None => t.with_timezone(&Local).format(FORMAT).to_string(),
        }
    }

    /// `format`, or `-` when the store recorded no time.
    pub fn or_dash(&self, t: Option<DateTime<Utc>>) -> String {
        t.map(|t| self.format(t)).unwrap_or_else(|| "-".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn one_precision_in_the_given_zone() {
        let t = Utc.with_ymd_and_hms(2026, 3, 20, 23, 30, 59).unwrap();
        assert_eq!(TimeFmt::utc().format(t), "2026-03-20 23:30");
        let plus2 = TimeFmt::fixed(FixedOffset::east_opt(2 * 3600).unwrap());
        assert_eq!(plus2.format(t), "2026-03-21 01:30");
        assert_eq!(TimeFmt::utc().or_dash(None), "-");
    }
}
