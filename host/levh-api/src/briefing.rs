//! The daily briefing and meeting prep: deterministic views of the day and of one meeting,
//! read from the memories valid now — calendar events in the user's zone (`LEVH_TZ`),
//! promises and decisions the texts state, the people recorded with each memory.

use std::collections::BTreeSet;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use levh_core::{Levh, Memory, Scope, Timestamp};

use crate::knowledge::{found_commitments_by_whom, people, user_time_zone};
use crate::requests::{BriefingArgs, KnowledgeArgs, MeetingPrepArgs};
use crate::views::{
    AttendeeView, BriefingView, CalendarEventView, FoundDecisionView, MeetingPrepView,
    MemoryLineView, PersonTodayView,
};
use crate::{Error, Result};

/// Importance from which a fading memory is named in the briefing.
const IMPORTANT: f64 = 0.7;
/// Days of decisions a briefing shows, and a meeting prep looks back.
const DECISION_DAYS: i64 = 7;
const PREP_DAYS: i64 = 30;

/// [`Operation::Briefing`](crate::Operation::Briefing).
pub fn briefing(levh: &Levh, scope: &Scope, args: BriefingArgs) -> Result<BriefingView> {
    let zone = user_time_zone(levh)?;
    let date = match args.date.as_deref() {
        Some(text) => crate::timeline::day("date", text, &zone)?,
        None => levh.now().to_zoned(zone.clone()).date(),
    };
    let start = crate::timeline::start_of(date, &zone)?;
    let end = crate::timeline::start_of(next_day(date)?, &zone)?;
    let all = crate::knowledge::memories(
        levh,
        scope,
        &KnowledgeArgs {
            project: args.project.clone(),
            ..KnowledgeArgs::default()
        },
    )?;
    let mut events: Vec<CalendarEventView> = all
        .iter()
        .filter(|m| is_event(m) && m.valid_from >= start && m.valid_from < end)
        .map(|m| event_view(m, &zone))
        .collect();
    events.sort_by(|a, b| a.start.cmp(&b.start));

    let (mut due, mut owed_to_me) = found_commitments_by_whom(levh, scope, &all, &all, &zone)?;
    let day = date.to_string();
    for found in [&mut due, &mut owed_to_me] {
        found.retain(|c| !c.done && c.due.as_deref().is_some_and(|d| d <= day.as_str()));
    }

    let week_ago = crate::timeline::start_of(shift(date, -(DECISION_DAYS - 1))?, &zone)?;
    let decisions = decisions_between(levh, scope, args.project.clone(), week_ago, end)?;

    let me = crate::knowledge::Me::configured(levh);
    let mut met: BTreeSet<String> = BTreeSet::new();
    for event in &events {
        met.extend(event.attendees.iter().cloned());
    }
    let people_today: Vec<PersonTodayView> = met
        .into_iter()
        .filter(|name| me.as_ref().is_none_or(|me| !me.is(name)))
        .map(|name| PersonTodayView {
            last_discussed: with_person(&all, &name, start, &zone).into_iter().next(),
            name,
        })
        .collect();

    let fading = levh
        .fading(scope, args.project, 100)?
        .into_iter()
        .filter(|f| f.memory.state.importance >= IMPORTANT)
        .take(10)
        .map(|f| line(&f.memory, &zone))
        .collect();
    Ok(BriefingView {
        date: date.to_string(),
        time_zone: zone.iana_name().unwrap_or("system").to_owned(),
        events,
        due,
        owed_to_me,
        decisions,
        people: people_today,
        fading,
    })
}

/// [`Operation::MeetingPrep`](crate::Operation::MeetingPrep).
pub fn meeting_prep(levh: &Levh, scope: &Scope, args: MeetingPrepArgs) -> Result<MeetingPrepView> {
    let zone = user_time_zone(levh)?;
    let all = crate::knowledge::memories(levh, scope, &KnowledgeArgs::default())?;
    let event = match args.event.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
        Some(wanted) => all
            .iter()
            .find(|m| {
                is_event(m)
                    && (m.id.to_string() == wanted
                        || m.metadata["source_id"].as_str() == Some(wanted)
                        || m.metadata["uid"].as_str() == Some(wanted))
            })
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no calendar event '{}' (a memory id, or a source id as `levh timeline` shows it)",
                    wanted.escape_debug()
                ))
            })?,
        None => {
            let now = levh.now();
            all.iter()
                .filter(|m| is_event(m) && m.valid_from >= now)
                .min_by_key(|m| m.valid_from)
                .ok_or_else(|| Error::NotFound("no calendar event after now".into()))?
        }
    };
    let view = event_view(event, &zone);
    let me = crate::knowledge::Me::configured(levh);
    let since = event
        .valid_from
        .checked_sub(jiff::SignedDuration::from_hours(24 * PREP_DAYS))
        .map_err(|e| Error::internal(e.to_string()))?;
    let (mine, others) = found_commitments_by_whom(levh, scope, &all, &all, &zone)?;
    let attendees: Vec<AttendeeView> = view
        .attendees
        .iter()
        .filter(|name| me.as_ref().is_none_or(|me| !me.is(name)))
        .map(|name| AttendeeView {
            name: name.clone(),
            last_discussed: with_person(&all, name, event.valid_from, &zone)
                .into_iter()
                .filter(|l| l.memory_id != view.memory_id)
                .take(5)
                .collect(),
            commitments: mine
                .iter()
                .chain(&others)
                .filter(|c| {
                    !c.done
                        && c.written_at < view.start
                        && (c.by.as_deref() == Some(name.as_str())
                            || c.sentence.contains(first_name(name)))
                })
                .cloned()
                .collect(),
        })
        .collect();
    let subject = subject_words(&view.title);
    let names: Vec<&str> = attendees.iter().map(|a| a.name.as_str()).collect();
    let decisions: Vec<FoundDecisionView> =
        decisions_between(levh, scope, None, since, event.valid_from)?
            .into_iter()
            .filter(|d| {
                d.people.iter().any(|p| names.contains(&p.as_str()))
                    || d.by.as_deref().is_some_and(|b| names.contains(&b))
                    || shares_subject(&d.sentence, &subject)
            })
            .collect();
    let documents = all
        .iter()
        .filter(|m| {
            matches!(m.kind.as_str(), "document" | "note" | "page")
                && shares_subject(&m.content, &subject)
        })
        .take(10)
        .map(|m| line(m, &zone))
        .collect();
    let mut previous: Vec<&Memory> = all
        .iter()
        .filter(|m| {
            is_event(m)
                && m.id != event.id
                && m.valid_from < event.valid_from
                && title(m) == view.title
        })
        .collect();
    previous.sort_by_key(|m| std::cmp::Reverse(m.valid_from));
    Ok(MeetingPrepView {
        event: view,
        attendees,
        decisions,
        documents,
        previous: previous
            .into_iter()
            .take(10)
            .map(|m| line(m, &zone))
            .collect(),
    })
}

fn next_day(date: Date) -> Result<Date> {
    date.tomorrow()
        .map_err(|e| Error::invalid(format!("invalid date {date}: {e}")))
}

fn shift(date: Date, days: i64) -> Result<Date> {
    date.checked_add(jiff::Span::new().days(days))
        .map_err(|e| Error::invalid(format!("invalid date {date}: {e}")))
}

fn is_event(memory: &Memory) -> bool {
    memory.kind.as_str() == "event"
}

fn title(memory: &Memory) -> String {
    memory.metadata["title"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| first_line(&memory.content))
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut short: String = line.chars().take(160).collect();
    if line.chars().count() > 160 {
        short.push('…');
    }
    short
}

fn line(memory: &Memory, zone: &TimeZone) -> MemoryLineView {
    MemoryLineView {
        memory_id: memory.id.to_string(),
        at: memory.valid_from.to_string(),
        day: memory.valid_from.to_zoned(zone.clone()).date().to_string(),
        kind: memory.kind.to_string(),
        line: title(memory),
    }
}

fn event_view(memory: &Memory, zone: &TimeZone) -> CalendarEventView {
    let all_day = memory.metadata["all_day"].as_bool() == Some(true);
    let start = memory.valid_from.to_zoned(zone.clone());
    CalendarEventView {
        memory_id: memory.id.to_string(),
        source_id: memory.metadata["source_id"].as_str().map(str::to_owned),
        title: title(memory),
        start: memory.valid_from.to_string(),
        end: memory.metadata["end"].as_str().map(str::to_owned),
        local_time: if all_day {
            "all day".into()
        } else {
            start.strftime("%H:%M").to_string()
        },
        location: memory.metadata["location"]
            .as_str()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned),
        attendees: people(memory),
    }
}

/// Memories recorded with `name` (or naming them) before `before`, newest first.
fn with_person(
    all: &[Memory],
    name: &str,
    before: Timestamp,
    zone: &TimeZone,
) -> Vec<MemoryLineView> {
    let mut found: Vec<&Memory> = all
        .iter()
        .filter(|m| {
            m.valid_from < before
                && (people(m).iter().any(|p| p == name) || m.content.contains(name))
        })
        .collect();
    found.sort_by_key(|m| std::cmp::Reverse(m.valid_from));
    found.into_iter().map(|m| line(m, zone)).collect()
}

fn first_name(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

fn decisions_between(
    levh: &Levh,
    scope: &Scope,
    project: Option<String>,
    from: Timestamp,
    to: Timestamp,
) -> Result<Vec<FoundDecisionView>> {
    Ok(crate::knowledge::decisions(
        levh,
        scope,
        KnowledgeArgs {
            project,
            from: Some(from.to_string()),
            to: Some(to.to_string()),
            limit: Some(crate::knowledge::DEFAULT_LIMIT),
            include_done: None,
        },
    )?
    .decisions)
}

/// The words of a meeting's title that name its subject (four letters or more).
fn subject_words(title: &str) -> Vec<String> {
    const GENERIC: &[&str] = &[
        "meeting", "sync", "call", "weekly", "daily", "with", "standup",
    ];
    title
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4 && !GENERIC.contains(w))
        .map(str::to_owned)
        .collect()
}

fn shares_subject(text: &str, subject: &[String]) -> bool {
    let lower = text.to_lowercase();
    !subject.is_empty() && subject.iter().any(|w| lower.contains(w.as_str()))
}
