//! Dates without a clock: SOURCE_DATE_EPOCH to a calendar date.

/// SOURCE_DATE_EPOCH as the environment gives it: the date of a compile whose context sets
/// none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceDateEpoch {
    #[default]
    Unset,
    /// Seconds since 1970-01-01, up to the end of 9999 (a date a context could hold too).
    At(i64),
    /// Set, but not such a number. A context with its own date never reads it, so that
    /// alone is no error: a compile whose context has no date has none, and where a
    /// template reads it, the error names the variable.
    Invalid,
}

impl SourceDateEpoch {
    /// The date it gives, `YYYY-MM-DD`, if it gives one.
    pub fn date(self) -> Option<String> {
        match self {
            SourceDateEpoch::At(seconds) => Some(date_from_epoch(seconds)),
            SourceDateEpoch::Unset | SourceDateEpoch::Invalid => None,
        }
    }
}

impl From<Option<i64>> for SourceDateEpoch {
    fn from(seconds: Option<i64>) -> Self {
        seconds.map_or(SourceDateEpoch::Unset, SourceDateEpoch::At)
    }
}

/// `YYYY-MM-DD` of a Unix timestamp (UTC), for SOURCE_DATE_EPOCH.
pub fn date_from_epoch(seconds: i64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_dates() {
        assert_eq!(date_from_epoch(0), "1970-01-01");
        assert_eq!(date_from_epoch(951_782_400), "2000-02-29");
        assert_eq!(date_from_epoch(1_793_491_200), "2026-11-01");
    }
}
