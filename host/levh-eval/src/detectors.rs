//! Precision and recall of levh-knowledge's detectors — decisions, commitments (and the
//! due dates they name), people — on the labelled sentence sets in `fixtures/knowledge/`,
//! per language, checked against the thresholds kept with the sets
//! (`levh eval detectors [--check]`). Deterministic: no store, no embedder.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The labelled sets: `dev`, which the rule files were written against, and `holdout`,
/// written separately by someone who had not seen the rules — its figures are the honest
/// ones, and the thresholds are set on it.
const SETS: [Set; 2] = [
    Set {
        name: "dev",
        decisions: include_str!("../../../fixtures/knowledge/decisions.jsonl"),
        commitments: include_str!("../../../fixtures/knowledge/commitments.jsonl"),
        people: include_str!("../../../fixtures/knowledge/people.jsonl"),
        conflicts: include_str!("../../../fixtures/knowledge/conflicts.jsonl"),
    },
    Set {
        name: "holdout",
        decisions: include_str!("../../../fixtures/knowledge/decisions.holdout.jsonl"),
        commitments: include_str!("../../../fixtures/knowledge/commitments.holdout.jsonl"),
        people: include_str!("../../../fixtures/knowledge/people.holdout.jsonl"),
        conflicts: include_str!("../../../fixtures/knowledge/conflicts.holdout.jsonl"),
    },
];

struct Set {
    name: &'static str,
    decisions: &'static str,
    commitments: &'static str,
    people: &'static str,
    conflicts: &'static str,
}
const THRESHOLDS: &str = include_str!("../../../fixtures/knowledge/thresholds.json");

/// Counts of one detector on one slice of its set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Slice {
    /// `decisions/en`, `commitments/tr`, `people/all`, `commitments/due`, ...
    pub name: String,
    /// Labelled positive, found.
    pub true_positives: u64,
    /// Not labelled, found.
    pub false_positives: u64,
    /// Labelled, not found.
    pub false_negatives: u64,
    /// Labelled negative, not found (sentence sets only).
    pub true_negatives: u64,
}

impl Slice {
    fn new(name: String) -> Self {
        Self {
            name,
            ..Self::default()
        }
    }

    fn count(&mut self, expected: bool, found: bool) {
        match (expected, found) {
            (true, true) => self.true_positives += 1,
            (false, true) => self.false_positives += 1,
            (true, false) => self.false_negatives += 1,
            (false, false) => self.true_negatives += 1,
        }
    }

    /// Found and right over found (1 when nothing was found).
    pub fn precision(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_positives,
        )
    }

    /// Found and right over labelled (1 when nothing was labelled).
    pub fn recall(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_negatives,
        )
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// One sentence the detector got wrong, to read and learn from.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// Which detector.
    pub detector: String,
    /// The sentence.
    pub text: String,
    /// What the label says.
    pub expected: String,
    /// What the detector said.
    pub found: String,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct DetectorReport {
    /// Every slice: per detector and language, and all languages together.
    pub slices: Vec<Slice>,
    /// Threshold checks that failed, in words.
    pub failures: Vec<String>,
    /// Every wrong answer.
    pub misses: Vec<Miss>,
}

#[derive(Deserialize)]
struct DecisionCase {
    text: String,
    lang: String,
    decision: bool,
}

#[derive(Deserialize)]
struct CommitmentCase {
    text: String,
    lang: String,
    written_at: String,
    commitment: bool,
    due: Option<String>,
}

/// A labelled pair of the conflict sets: `a` older, `b` newer.
#[derive(Debug, Clone, Deserialize)]
pub struct ConflictCase {
    pub a: String,
    pub b: String,
    pub kind: String,
    pub conflict: bool,
    pub lang: String,
}

/// The labelled conflict pairs of each set (`dev`, `holdout`), for harnesses that run them
/// through more than the detector (the gate: `levh eval conflicts-gate`).
pub fn conflict_pairs() -> Result<Vec<(&'static str, ConflictCase)>, String> {
    let mut pairs = Vec::new();
    for set in &SETS {
        let file = if set.name == "dev" {
            "conflicts.jsonl"
        } else {
            "conflicts.holdout.jsonl"
        };
        for case in cases::<ConflictCase>(file, set.conflicts)? {
            pairs.push((set.name, case));
        }
    }
    Ok(pairs)
}

#[derive(Deserialize)]
struct PeopleCase {
    text: String,
    known_people: Vec<String>,
    people: Vec<String>,
}

/// `{"decisions/all": {"precision": 0.85, "recall": 0.8}, ...}`
type Thresholds = BTreeMap<String, BTreeMap<String, f64>>;

fn cases<T: for<'de> Deserialize<'de>>(file: &str, text: &str) -> Result<Vec<T>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            serde_json::from_str(line).map_err(|e| format!("{file}:{}: {e}", number + 1))
        })
        .collect()
}

/// Counts one answer in the detector's slice for the language and in its `all` slice.
fn count(
    slices: &mut BTreeMap<String, Slice>,
    detector: &str,
    lang: &str,
    expected: bool,
    found: bool,
) {
    for name in [format!("{detector}/{lang}"), format!("{detector}/all")] {
        slices
            .entry(name.clone())
            .or_insert_with(|| Slice::new(name))
            .count(expected, found);
    }
}

/// Counts one set's answers into `slices` (named `detector/set/lang` and
/// `detector/set/all`), its wrong ones into `misses`.
fn measure(
    set: &Set,
    slices: &mut BTreeMap<String, Slice>,
    misses: &mut Vec<Miss>,
) -> Result<(), String> {
    let file = |kind: &str| {
        format!(
            "{kind}{}.jsonl",
            if set.name == "dev" { "" } else { ".holdout" }
        )
    };
    for case in cases::<DecisionCase>(&file("decisions"), set.decisions)? {
        let found = levh_knowledge::decisions::decisions(&case.text);
        count(
            slices,
            &format!("decisions/{}", set.name),
            &case.lang,
            case.decision,
            !found.is_empty(),
        );
        if case.decision == found.is_empty() {
            misses.push(Miss {
                detector: format!("decisions/{}", set.name),
                text: case.text,
                expected: case.decision.to_string(),
                found: (!found.is_empty()).to_string(),
            });
        }
    }

    let mut due = Slice::new(format!("commitments/{}/due", set.name));
    for case in cases::<CommitmentCase>(&file("commitments"), set.commitments)? {
        // The writer's local date is the date part of an RFC 3339 time with its offset.
        let written_on: jiff::civil::Date = case
            .written_at
            .get(..10)
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| {
                format!(
                    "{}: bad written_at {:?}",
                    file("commitments"),
                    case.written_at
                )
            })?;
        let found = levh_knowledge::commitments::commitments(&case.text, written_on);
        count(
            slices,
            &format!("commitments/{}", set.name),
            &case.lang,
            case.commitment,
            !found.is_empty(),
        );
        if case.commitment == found.is_empty() {
            misses.push(Miss {
                detector: format!("commitments/{}", set.name),
                text: case.text.clone(),
                expected: case.commitment.to_string(),
                found: (!found.is_empty()).to_string(),
            });
        }
        // Due dates, on the promises both the label and the detector see: a named date
        // resolved to the right day is a true positive; a wrong or invented one is a false
        // positive; a missed one a false negative.
        if case.commitment && !found.is_empty() {
            let got = found.iter().find_map(|c| c.due).map(|d| d.to_string());
            match (&case.due, &got) {
                (Some(want), Some(have)) if want == have => due.true_positives += 1,
                (None, None) => due.true_negatives += 1,
                (want, have) => {
                    match (want, have) {
                        (Some(_), None) => due.false_negatives += 1,
                        _ => due.false_positives += 1,
                    }
                    misses.push(Miss {
                        detector: format!("commitments/{}/due", set.name),
                        text: format!("{} (written {})", case.text, case.written_at),
                        expected: format!("{want:?}"),
                        found: format!("{have:?}"),
                    });
                }
            }
        }
    }
    slices.insert(due.name.clone(), due);

    let mut people = Slice::new(format!("people/{}/all", set.name));
    for case in cases::<PeopleCase>(&file("people"), set.people)? {
        let found: Vec<String> = levh_knowledge::people::mentions(&case.text, &case.known_people)
            .into_iter()
            .map(|m| m.name)
            .collect();
        let right = found.iter().filter(|f| case.people.contains(f)).count() as u64;
        people.true_positives += right;
        people.false_positives += found.len() as u64 - right;
        people.false_negatives += case.people.iter().filter(|p| !found.contains(p)).count() as u64;
        if found != case.people {
            misses.push(Miss {
                detector: format!("people/{}", set.name),
                text: case.text,
                expected: format!("{:?}", case.people),
                found: format!("{found:?}"),
            });
        }
    }
    slices.insert(people.name.clone(), people);

    // Conflicts: a pair is found when the detector calls it a conflict (of any kind); a
    // supersession ("moved to…") is not one. Per language, and per labelled kind (the
    // kinds that are not conflicts count only false positives and true negatives).
    for case in cases::<ConflictCase>(&file("conflicts"), set.conflicts)? {
        let relation = levh_knowledge::conflicts::relate(&case.a, &case.b);
        let found = matches!(
            relation,
            Some(levh_knowledge::conflicts::Relation::Conflict(_))
        );
        count(
            slices,
            &format!("conflicts/{}", set.name),
            &case.lang,
            case.conflict,
            found,
        );
        let name = format!("conflicts/{}/kind/{}", set.name, case.kind);
        slices
            .entry(name.clone())
            .or_insert_with(|| Slice::new(name))
            .count(case.conflict, found);
        if case.conflict != found {
            misses.push(Miss {
                detector: format!("conflicts/{}", set.name),
                text: format!("{} | {}", case.a, case.b),
                expected: case.kind,
                found: format!("{relation:?}"),
            });
        }
    }
    Ok(())
}

/// Runs every detector over every set and checks the thresholds.
pub fn run() -> Result<DetectorReport, String> {
    let mut slices: BTreeMap<String, Slice> = BTreeMap::new();
    let mut misses = Vec::new();
    for set in &SETS {
        measure(set, &mut slices, &mut misses)?;
    }
    let thresholds: Thresholds =
        serde_json::from_str(THRESHOLDS).map_err(|e| format!("thresholds.json: {e}"))?;
    let mut failures = Vec::new();
    for (name, wanted) in &thresholds {
        let Some(slice) = slices.get(name) else {
            failures.push(format!("{name}: no such slice"));
            continue;
        };
        for (measure, minimum) in wanted {
            let value = match measure.as_str() {
                "precision" => slice.precision(),
                "recall" => slice.recall(),
                other => {
                    failures.push(format!("{name}: unknown measure {other}"));
                    continue;
                }
            };
            if value < *minimum {
                failures.push(format!("{name}: {measure} {value:.3} < {minimum}"));
            }
        }
    }
    Ok(DetectorReport {
        slices: slices.into_values().collect(),
        failures,
        misses,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_detector_meets_its_thresholds_on_the_labelled_sets() {
        let report = super::run().unwrap();
        assert!(
            report.failures.is_empty(),
            "{:#?}\n{:#?}",
            report.failures,
            report.slices
        );
        // Every set is measured, in every language it has.
        let names: Vec<&str> = report.slices.iter().map(|s| s.name.as_str()).collect();
        for name in [
            "decisions/dev/en",
            "decisions/dev/tr",
            "decisions/holdout/en",
            "decisions/holdout/tr",
            "commitments/dev/en",
            "commitments/holdout/tr",
            "commitments/holdout/due",
            "people/holdout/all",
        ] {
            assert!(names.contains(&name), "{names:?}");
        }
    }
}
