//! What a reviewer looks for: the search, filters, time range and page of the queue, the
//! history and the audit, read from a URL's query and turned into SQL conditions whose every
//! value is bound (never spliced), in the SQL SQLite and PostgreSQL share.

use serde::{Deserialize, Serialize};

use super::{identity, visible};

/// How many rows a page lists.
pub const PAGE_SIZE: i64 = 50;

/// The most words a search takes (the rest are ignored).
const MAX_WORDS: usize = 8;

/// What a reviewer asks for, as the URL's query says it (`?q=terraform&team=payments&page=2`):
/// an empty field asks for anything. Read it with [`Filter::tidy`].
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Filter {
    /// Words that must all appear (in any case): in an escalation's request (command, paths,
    /// reasons, the agent's words), who asked and their team; in an audit record's subject,
    /// answer, developer and agent.
    pub q: String,
    pub developer: String,
    pub team: String,
    pub agent: String,
    pub kind: String,
    /// Decided escalations: `allowed` or `denied`; audit records: also `neither`.
    pub decision: String,
    /// Audit records: who decided (`chain`, `person`, `reviewer`, `nobody`).
    pub by: String,
    /// The time range, in UTC: `2026-11-29`, `2026-11-29T14:30` (or with seconds, a `Z` or an
    /// offset). `from` is included, `to` is not; a `to` that is a date alone includes that day.
    pub from: String,
    pub to: String,
    /// The page, from 1.
    pub page: String,
    #[serde(skip)]
    range: (Option<i64>, Option<i64>),
}

/// What can be asked of `decision` and `by`.
const DECISIONS: [&str; 3] = ["allowed", "denied", "neither"];
pub const DECIDERS: [&str; 4] = ["chain", "person", "reviewer", "nobody"];

impl Filter {
    /// The filter as asked, tidied: trimmed; each hidden character written as the page shows
    /// it (`⟨U+202E⟩`) read back as itself, so a value copied from the page finds what it
    /// shows; the developer in the one form names are compared in; the times read. Refused
    /// (naming the field) when a value cannot be one.
    pub fn tidy(mut self) -> Result<Filter, String> {
        for field in [
            &mut self.q,
            &mut self.developer,
            &mut self.team,
            &mut self.agent,
            &mut self.kind,
            &mut self.decision,
            &mut self.by,
            &mut self.from,
            &mut self.to,
            &mut self.page,
        ] {
            *field = visible::unplain(field.trim()).into_owned();
        }
        if !self.developer.is_empty() {
            self.developer = identity::person(&self.developer);
        }
        let known = |value: &str, known: &[&str]| value.is_empty() || known.contains(&value);
        if !known(&self.decision, &DECISIONS) {
            return Err(format!("`decision`: {}, or nothing", DECISIONS.join(", ")));
        }
        if !known(&self.by, &DECIDERS) {
            return Err(format!("`by`: {}, or nothing", DECIDERS.join(", ")));
        }
        if !self.page.is_empty() && self.page.parse::<i64>().is_err() {
            return Err("`page`: a number from 1".to_owned());
        }
        self.range = (instant(&self.from, false)?, instant(&self.to, true)?);
        Ok(self)
    }

    /// The page asked for, from 1.
    pub fn page(&self) -> i64 {
        self.page.parse::<i64>().unwrap_or(1).clamp(1, 1_000_000)
    }

    /// The conditions on escalations: open ones (the queue, by when they were asked) or
    /// decided ones (the history, by when they were decided).
    pub fn escalations(&self, open: bool) -> Conditions {
        let mut conditions = Conditions::default();
        let time = match open {
            true => {
                conditions.fixed("status = 'open'");
                "created_ms"
            }
            false => {
                conditions.fixed("status <> 'open'");
                if matches!(self.decision.as_str(), "allowed" | "denied") {
                    conditions.text("status = ?", &self.decision);
                }
                "decided_ms"
            }
        };
        for (column, value) in [
            ("developer", &self.developer),
            ("team", &self.team),
            ("agent", &self.agent),
            ("kind", &self.kind),
        ] {
            if !value.is_empty() {
                conditions.text(&format!("{column} = ?"), value);
            }
        }
        conditions.words(
            "LOWER(requester || ' ' || COALESCE(team, '') || ' ' || body)",
            &self.q,
        );
        conditions.range(time, self.range);
        conditions
    }

    /// The conditions on audit records, by when the call was made.
    pub fn audit_records(&self) -> Conditions {
        let mut conditions = Conditions::default();
        for (column, value) in [
            ("developer", &self.developer),
            ("agent", &self.agent),
            ("kind", &self.kind),
            ("decided_by", &self.by),
        ] {
            if !value.is_empty() {
                conditions.text(&format!("{column} = ?"), value);
            }
        }
        match self.decision.as_str() {
            "allowed" => conditions.fixed("allowed = 1"),
            "denied" => conditions.fixed("allowed = 0"),
            "neither" => conditions.fixed("allowed IS NULL"),
            _ => {}
        }
        conditions.words(
            "LOWER(subject || ' ' || answer || ' ' || developer || ' ' || agent)",
            &self.q,
        );
        conditions.range("timestamp_ms", self.range);
        conditions
    }
}

/// A time as a filter takes it, in milliseconds (UTC unless it says otherwise); an `end`
/// that is a date alone is the start of the next day. Empty: none.
fn instant(text: &str, end: bool) -> Result<Option<i64>, String> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    if text.is_empty() {
        return Ok(None);
    }
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(Some(time.timestamp_millis()));
    }
    let bare = text.trim_end_matches(['Z', 'z']).replacen(' ', "T", 1);
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(time) = NaiveDateTime::parse_from_str(&bare, format) {
            return Ok(Some(time.and_utc().timestamp_millis()));
        }
    }
    if let Ok(day) = NaiveDate::parse_from_str(&bare, "%Y-%m-%d") {
        let day = if end {
            day.succ_opt().unwrap_or(day)
        } else {
            day
        };
        let midnight = day.and_hms_opt(0, 0, 0).expect("midnight is a time");
        return Ok(Some(midnight.and_utc().timestamp_millis()));
    }
    let field = if end { "to" } else { "from" };
    Err(format!(
        "`{field}`: `{}` is not a time: 2026-11-29, or 2026-11-29T14:30 (UTC)",
        visible::plain(text)
    ))
}

/// A value a condition binds.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Text(String),
    Number(i64),
}

/// SQL conditions, all of which must hold, and the values they bind in order (`$1`, `$2`, …).
#[derive(Debug, Default, Clone)]
pub struct Conditions {
    sql: Vec<String>,
    values: Vec<Bound>,
}

impl Conditions {
    /// A condition that binds nothing: ours, never a reviewer's text.
    fn fixed(&mut self, condition: &'static str) {
        self.sql.push(condition.to_owned());
    }

    /// `condition` with each `?` standing for `value`'s placeholder.
    pub fn bind(&mut self, condition: &str, value: Bound) {
        let placeholder = self.placeholder(value);
        self.sql.push(condition.replace('?', &placeholder));
    }

    /// The placeholder of one more value, for SQL outside the conditions (an order, a limit).
    pub fn placeholder(&mut self, value: Bound) -> String {
        self.values.push(value);
        format!("${}", self.values.len())
    }

    fn text(&mut self, condition: &str, value: &str) {
        self.bind(condition, Bound::Text(value.to_owned()));
    }

    /// Each word of `words` is in `haystack` (an SQL expression, lowercased).
    fn words(&mut self, haystack: &str, words: &str) {
        for word in words.split_whitespace().take(MAX_WORDS) {
            let escaped = word
                .to_lowercase()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            self.text(
                &format!("{haystack} LIKE ? ESCAPE '\\'"),
                &format!("%{escaped}%"),
            );
        }
    }

    fn range(&mut self, column: &str, (from, to): (Option<i64>, Option<i64>)) {
        if let Some(from) = from {
            self.bind(&format!("{column} >= ?"), Bound::Number(from));
        }
        if let Some(to) = to {
            self.bind(&format!("{column} < ?"), Bound::Number(to));
        }
    }

    /// `WHERE …`, or nothing when there is no condition.
    pub fn clause(&self) -> String {
        match self.sql.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", self.sql.join(" AND ")),
        }
    }

    /// The values to bind, in order.
    pub fn values(&self) -> &[Bound] {
        &self.values
    }
}

/// Where a page stands in a list of `total`: its rows are `first` to `last` (from 1).
#[derive(Debug, Clone, Serialize)]
pub struct Paged {
    pub page: i64,
    pub pages: i64,
    pub total: i64,
    pub first: i64,
    pub last: i64,
}

impl Paged {
    pub fn of(page: i64, total: i64, shown: usize) -> Paged {
        let first = (page - 1) * PAGE_SIZE + 1;
        Paged {
            page,
            pages: (total + PAGE_SIZE - 1) / PAGE_SIZE,
            total,
            first: if shown == 0 { 0 } else { first },
            last: first - 1 + shown as i64,
        }
    }

    /// The rows a page skips.
    pub fn offset(page: i64) -> i64 {
        (page - 1) * PAGE_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidy(pairs: &[(&str, &str)]) -> Result<Filter, String> {
        let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let filter: Filter = serde_json::from_value(serde_json::Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                .collect(),
        ))
        .unwrap_or_else(|e| panic!("{query:?}: {e}"));
        filter.tidy()
    }

    #[test]
    fn a_reviewers_words_and_values_are_bound_never_spliced() {
        let filter = tidy(&[
            ("q", "  100%_sure' OR 1=1 --  "),
            ("team", "pay'ments"),
            ("decision", "denied"),
            ("to", "2026-11-29"),
        ])
        .unwrap();
        let conditions = filter.escalations(false);
        let sql = conditions.clause();
        for word in ["pay'ments", "sure", "1=1"] {
            assert!(!sql.contains(word), "{sql}");
        }
        assert_eq!(
            conditions.values(),
            [
                Bound::Text("denied".into()),
                Bound::Text("pay'ments".into()),
                Bound::Text("%100\\%\\_sure'%".into()),
                Bound::Text("%or%".into()),
                Bound::Text("%1=1%".into()),
                Bound::Text("%--%".into()),
                Bound::Number(1_795_996_800_000),
            ]
        );
        assert!(sql.ends_with("decided_ms < $7"), "{sql}");
    }

    #[test]
    fn times_are_utc_and_a_date_alone_as_the_end_includes_its_day() {
        let day = 1_795_910_400_000; // 2026-11-29T00:00:00Z
        assert_eq!(instant("2026-11-29", false), Ok(Some(day)));
        assert_eq!(instant("2026-11-29", true), Ok(Some(day + 86_400_000)));
        assert_eq!(
            instant("2026-11-29T14:30", false),
            Ok(Some(day + 52_200_000))
        );
        assert_eq!(
            instant("2026-11-29 14:30:00Z", true),
            Ok(Some(day + 52_200_000))
        );
        assert_eq!(
            instant("2026-11-29T15:30:00+01:00", false),
            Ok(Some(day + 52_200_000))
        );
        assert_eq!(instant("", true), Ok(None));
        let refused = tidy(&[("from", "yesterday\u{202E}")]).unwrap_err();
        assert!(
            refused.contains("`from`: `yesterday⟨U+202E⟩` is not a time"),
            "{refused}"
        );
        assert!(tidy(&[("by", "mallory")]).is_err());
        assert!(tidy(&[("page", "two")]).is_err());
    }

    #[test]
    fn a_value_copied_from_the_page_finds_what_it_shows() {
        let filter = tidy(&[
            ("q", "rm ⟨U+202E⟩hs"),
            ("developer", " ALI\u{200B}CE@laptop "),
        ]);
        let filter = filter.unwrap();
        assert_eq!(filter.q, "rm \u{202E}hs");
        assert_eq!(filter.developer, "alice");
    }

    #[test]
    fn pages_count_from_one() {
        let paged = Paged::of(5, 230, 30);
        assert_eq!((paged.pages, paged.first, paged.last), (5, 201, 230));
        let empty = Paged::of(1, 0, 0);
        assert_eq!((empty.pages, empty.first, empty.last), (0, 0, 0));
        assert_eq!(tidy(&[("page", "-3")]).unwrap().page(), 1);
    }
}
