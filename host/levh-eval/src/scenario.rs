//! Golden scenarios: files of steps run through the real pipeline (gate → store → recall
//! → model) on a fresh store, each expectation a check in a JSON report.
//!
//! A scenario is `{name, description, requires, steps}`; each step is an object with one
//! action key: `store`, `decide`, `advance_days`, `recall`, `feedback`, `pin`, `forget`,
//! `fading`/`not_fading`, or `weaker`. `fixtures/eval/README.md` describes them; the files shipped
//! with levh are [`BUILTIN`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow, bail};
use levh_core::{Config, Embedder, HeldId, Kind, MemoryId, NewMemory, RecallRequest, Timestamp};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{EVALUATION_VERSION, Sandbox, measure_name};

/// The scenarios shipped with levh: `fixtures/eval/*.json` (file name, text).
pub const BUILTIN: &[(&str, &str)] = &include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// A golden scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// What it pins.
    pub description: String,
    /// The file it came from.
    pub file: String,
    /// Which embedders it runs with.
    pub requires: Requires,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// Which embedders a scenario runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requires {
    /// Every embedder.
    #[default]
    Any,
    /// A semantic model only (e.g. paraphrases judged by cosine); skipped otherwise.
    Semantic,
}

/// The gate verdict a store step expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedVerdict {
    /// Stored as given.
    Admit,
    /// Stored with secrets replaced.
    Redact,
    /// Held for a person.
    Review,
    /// Not stored.
    Reject,
}

impl ExpectedVerdict {
    fn name(self) -> &'static str {
        match self {
            Self::Admit => "admit",
            Self::Redact => "redact",
            Self::Review => "review",
            Self::Reject => "reject",
        }
    }
}

/// A step of a scenario.
#[derive(Debug, Clone)]
pub enum Step {
    /// Capture content through the gate.
    Store(StoreStep),
    /// A person decides a held candidate.
    Decide(DecideStep),
    /// Move the clock forward.
    Advance(AdvanceStep),
    /// Recall (reinforcing what is returned).
    Recall(RecallStep),
    /// Say whether a memory helped.
    Feedback(FeedbackStep),
    /// Pin a memory.
    Pin(LabelStep),
    /// Forget a memory.
    Forget(LabelStep),
    /// Which memories are fading now.
    Fading(FadingStep),
    /// One memory's stability is below another's (interference, feedback).
    Weaker(WeakerStep),
}

/// `{"weaker": "old", "than": "new"}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeakerStep {
    /// The memory expected to be weaker (lower stability).
    pub weaker: String,
    /// The memory it is compared with.
    pub than: String,
}

/// `{"store": "...", "as": "label", "expect": "admit", ...}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreStep {
    /// The content.
    pub store: String,
    /// Names what it became (memory or held candidate) for later steps.
    #[serde(rename = "as", default)]
    pub label: Option<String>,
    /// Project.
    #[serde(default)]
    pub project: Option<String>,
    /// Kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Importance 0..=1.
    #[serde(default)]
    pub importance: Option<f64>,
    /// Pin at once.
    #[serde(default)]
    pub pinned: bool,
    /// The verdict the gate must give.
    pub expect: ExpectedVerdict,
    /// Strings the stored content must not contain.
    #[serde(default)]
    pub expect_absent: Vec<String>,
    /// Strings the stored content must contain.
    #[serde(default)]
    pub expect_present: Vec<String>,
}

/// `{"decide": "label", "action": "admit", "supersede": true}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideStep {
    /// The held candidate's label.
    pub decide: String,
    /// What the person decides.
    pub action: Decision,
    /// On admit: retire the memory that caused the hold.
    #[serde(default)]
    pub supersede: bool,
}

/// A person's decision on a held candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Store it.
    Admit,
    /// Drop it.
    Discard,
}

/// `{"advance_days": 7}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdvanceStep {
    /// Days, may be fractional.
    pub advance_days: f64,
}

/// `{"recall": "query", "expect_top": "a", "expect": ["a"], "forbid": ["b"]}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallStep {
    /// The query.
    pub recall: String,
    /// Project filter.
    #[serde(default)]
    pub project: Option<String>,
    /// Results asked for.
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// The label that must come first.
    #[serde(default)]
    pub expect_top: Option<String>,
    /// Labels that must all be returned.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Labels that must not be returned.
    #[serde(default)]
    pub forbid: Vec<String>,
}

fn default_limit() -> usize {
    5
}

/// `{"feedback": "label", "helpful": false}`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackStep {
    /// The memory.
    pub feedback: String,
    /// Whether it helped (false: it was wrong).
    pub helpful: bool,
}

/// `{"pin": "label"}` or `{"forget": "label"}`
#[derive(Debug, Clone, Deserialize)]
pub struct LabelStep {
    /// The memory.
    pub label: String,
}

/// `{"fading": ["a"], "not_fading": ["b"]}`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FadingStep {
    /// Labels that must be fading now.
    #[serde(default)]
    pub fading: Vec<String>,
    /// Labels that must not be.
    #[serde(default)]
    pub not_fading: Vec<String>,
}

/// The action keys, one of which every step has.
const ACTIONS: &[&str] = &[
    "store",
    "decide",
    "advance_days",
    "recall",
    "feedback",
    "pin",
    "forget",
    "fading",
    "not_fading",
    "weaker",
];

impl Step {
    fn parse(value: serde_json::Value) -> Result<Self> {
        let serde_json::Value::Object(object) = &value else {
            bail!("a step must be a JSON object");
        };
        let present: Vec<&str> = ACTIONS
            .iter()
            .copied()
            .filter(|key| object.contains_key(*key))
            .filter(|key| !(*key == "not_fading" && object.contains_key("fading")))
            .collect();
        let action = match present.as_slice() {
            [one] => *one,
            [] => bail!(
                "no action: a step needs one of {}",
                ACTIONS
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            many => bail!(
                "{} actions in one step ({}): split them into steps",
                many.len(),
                many.join(", ")
            ),
        };
        fn from<T: DeserializeOwned>(value: serde_json::Value) -> Result<T> {
            serde_json::from_value(value).map_err(|e| anyhow!("{e}"))
        }
        Ok(match action {
            "store" => Self::Store(from(value)?),
            "decide" => Self::Decide(from(value)?),
            "advance_days" => {
                let step: AdvanceStep = from(value)?;
                if !step.advance_days.is_finite() || step.advance_days < 0.0 {
                    bail!("`advance_days` must be a number of days ≥ 0");
                }
                Self::Advance(step)
            }
            "recall" => {
                let step: RecallStep = from(value)?;
                if step.limit == 0 {
                    bail!("`limit` must be at least 1");
                }
                Self::Recall(step)
            }
            "feedback" => Self::Feedback(from(value)?),
            "pin" | "forget" => {
                if object.len() != 1 {
                    bail!("`{action}` takes only a label");
                }
                let label = object[action]
                    .as_str()
                    .ok_or_else(|| anyhow!("`{action}` must be a label (a string)"))?
                    .to_owned();
                if action == "pin" {
                    Self::Pin(LabelStep { label })
                } else {
                    Self::Forget(LabelStep { label })
                }
            }
            "weaker" => Self::Weaker(from(value)?),
            _ => Self::Fading(from(value)?),
        })
    }

    /// The labels this step refers to (must be defined by an earlier store step).
    fn uses(&self) -> Vec<&str> {
        match self {
            Self::Store(_) | Self::Advance(_) => vec![],
            Self::Decide(s) => vec![s.decide.as_str()],
            Self::Recall(s) => s
                .expect_top
                .iter()
                .chain(&s.expect)
                .chain(&s.forbid)
                .map(String::as_str)
                .collect(),
            Self::Feedback(s) => vec![s.feedback.as_str()],
            Self::Pin(s) | Self::Forget(s) => vec![s.label.as_str()],
            Self::Weaker(s) => vec![s.weaker.as_str(), s.than.as_str()],
            Self::Fading(s) => s
                .fading
                .iter()
                .chain(&s.not_fading)
                .map(String::as_str)
                .collect(),
        }
    }

    fn action(&self) -> &'static str {
        match self {
            Self::Store(_) => "store",
            Self::Decide(_) => "decide",
            Self::Advance(_) => "advance",
            Self::Recall(_) => "recall",
            Self::Feedback(_) => "feedback",
            Self::Pin(_) => "pin",
            Self::Forget(_) => "forget",
            Self::Fading(_) => "fading",
            Self::Weaker(_) => "weaker",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    requires: Requires,
    steps: Vec<serde_json::Value>,
}

impl Scenario {
    /// Parses and checks a scenario file's text; `file` names it in errors and reports.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let raw: ScenarioFile = serde_json::from_str(text)
            .with_context(|| format!("{file} is not a valid scenario"))?;
        if raw.steps.is_empty() {
            bail!("{file}: `steps` is empty");
        }
        let mut steps = Vec::with_capacity(raw.steps.len());
        let mut defined: Vec<String> = Vec::new();
        for (n, value) in raw.steps.into_iter().enumerate() {
            let step = Step::parse(value).with_context(|| format!("{file}: step {}", n + 1))?;
            for label in step.uses() {
                if !defined.iter().any(|d| d == label) {
                    bail!(
                        "{file}: step {}: label `{label}` is not named by an earlier store step (`\"as\": \"{label}\"`)",
                        n + 1
                    );
                }
            }
            if let Step::Store(StoreStep {
                label: Some(label), ..
            }) = &step
            {
                if defined.contains(label) {
                    bail!("{file}: step {}: label `{label}` is already used", n + 1);
                }
                defined.push(label.clone());
            }
            steps.push(step);
        }
        Ok(Self {
            name: raw.name,
            description: raw.description,
            file: file.to_owned(),
            requires: raw.requires,
            steps,
        })
    }
}

/// The scenarios shipped with levh.
pub fn builtin() -> Result<Vec<Scenario>> {
    BUILTIN
        .iter()
        .map(|(file, text)| Scenario::parse(text, &format!("fixtures/eval/{file}")))
        .collect()
}

/// Every `*.json` file of `dir`, in name order. Any invalid file is an error: a golden
/// set that silently loses a scenario would report a pass it did not earn.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            paths.push(path);
        }
    }
    paths.sort();
    if paths.is_empty() {
        bail!("{} holds no scenario files (*.json)", dir.display());
    }
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Scenario::parse(&text, &path.display().to_string())
        })
        .collect()
}

/// Whether a scenario met its expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every check passed.
    Passed,
    /// A check failed, or a step could not run.
    Failed,
    /// Not run with this embedder.
    Skipped,
}

/// One expectation and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// 1-based step number.
    pub step: usize,
    /// The step's action.
    pub action: String,
    /// What was expected, in words.
    pub expected: String,
    /// What happened, in words.
    pub actual: String,
    /// Whether they agree.
    pub passed: bool,
}

/// One scenario's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// Its name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// What it pins.
    pub description: String,
    /// Passed, failed or skipped.
    pub status: Status,
    /// Why it was skipped, or why it stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Every expectation checked.
    pub checks: Vec<Check>,
}

/// Counts over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenarios run or skipped.
    pub scenarios: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Checks made.
    pub checks: usize,
    /// Checks that failed.
    pub checks_failed: usize,
}

/// An evaluation run: what `levh eval run` writes and `levh eval report` reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    /// [`EVALUATION_VERSION`] of the run.
    pub evaluation_version: u32,
    /// The levh that ran it.
    pub levh_version: String,
    /// The embedder's model id.
    pub embedder: String,
    /// `semantic` or `lexical`.
    pub measure: String,
    /// Where the scenarios came from (a directory, or `built-in`).
    pub fixtures: String,
    /// When it ran (wall clock; the scenarios run on their own clock).
    pub ran_at: Timestamp,
    /// How long it took, seconds.
    pub seconds: f64,
    /// Counts.
    pub summary: Summary,
    /// Every scenario, in run order.
    pub scenarios: Vec<ScenarioResult>,
}

impl EvalReport {
    /// Reads a report, refusing one of another evaluation version.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct Version {
            evaluation_version: u32,
        }
        let version: Version = serde_json::from_str(text)
            .with_context(|| format!("{origin} is not a levh evaluation report"))?;
        if version.evaluation_version != EVALUATION_VERSION {
            bail!(
                "{origin} is an evaluation version {} report; this levh reads version {EVALUATION_VERSION}",
                version.evaluation_version
            );
        }
        serde_json::from_str(text)
            .with_context(|| format!("{origin} is not a levh evaluation report"))
    }
}

/// Runs every scenario, each on a fresh store.
pub fn run(
    scenarios: &[Scenario],
    fixtures: &str,
    embedder: Arc<dyn Embedder>,
    config: Config,
) -> EvalReport {
    let started = Instant::now();
    let measure = measure_name(embedder.as_ref());
    let results: Vec<ScenarioResult> = scenarios
        .iter()
        .map(|scenario| run_one(scenario, embedder.clone(), config))
        .collect();
    let mut summary = Summary {
        scenarios: results.len(),
        ..Summary::default()
    };
    for result in &results {
        match result.status {
            Status::Passed => summary.passed += 1,
            Status::Failed => summary.failed += 1,
            Status::Skipped => summary.skipped += 1,
        }
        summary.checks += result.checks.len();
        summary.checks_failed += result.checks.iter().filter(|c| !c.passed).count();
    }
    EvalReport {
        evaluation_version: EVALUATION_VERSION,
        levh_version: env!("CARGO_PKG_VERSION").to_owned(),
        embedder: embedder.model_id().to_owned(),
        measure: measure.to_owned(),
        fixtures: fixtures.to_owned(),
        ran_at: Timestamp::now(),
        seconds: started.elapsed().as_secs_f64(),
        summary,
        scenarios: results,
    }
}

/// What a label names.
#[derive(Debug, Clone)]
enum Target {
    Memory(MemoryId),
    /// A held candidate and its (redacted) content.
    Held(HeldId, String),
    /// The store step stored nothing (rejected).
    Nothing,
}

fn run_one(scenario: &Scenario, embedder: Arc<dyn Embedder>, config: Config) -> ScenarioResult {
    let mut result = ScenarioResult {
        name: scenario.name.clone(),
        file: scenario.file.clone(),
        description: scenario.description.clone(),
        status: Status::Passed,
        note: None,
        checks: Vec::new(),
    };
    if scenario.requires == Requires::Semantic && !embedder.is_semantic() {
        result.status = Status::Skipped;
        result.note = Some(format!(
            "needs a semantic embedder; {} is lexical",
            embedder.model_id()
        ));
        return result;
    }
    let outcome = Sandbox::new(embedder, config).and_then(|sandbox| {
        let mut runner = Runner {
            sandbox,
            labels: HashMap::new(),
            checks: &mut result.checks,
        };
        for (n, step) in scenario.steps.iter().enumerate() {
            runner
                .step(n + 1, step)
                .with_context(|| format!("step {} ({})", n + 1, step.action()))?;
        }
        Ok(())
    });
    if let Err(error) = outcome {
        // A step that cannot run (an engine error, a label whose store step stored
        // nothing) fails the scenario; later steps would only repeat the failure.
        result.note = Some(format!("stopped: {error:#}"));
        result.status = Status::Failed;
    } else if result.checks.iter().any(|c| !c.passed) {
        result.status = Status::Failed;
    }
    result
}

struct Runner<'a> {
    sandbox: Sandbox,
    labels: HashMap<String, Target>,
    checks: &'a mut Vec<Check>,
}

impl Runner<'_> {
    fn check(&mut self, step: usize, action: &str, expected: String, actual: String, passed: bool) {
        self.checks.push(Check {
            step,
            action: action.to_owned(),
            expected,
            actual,
            passed,
        });
    }

    fn memory(&self, label: &str) -> Result<MemoryId> {
        match self.labels.get(label) {
            Some(Target::Memory(id)) => Ok(*id),
            Some(Target::Held(..)) => bail!("`{label}` is a held candidate, not a memory"),
            Some(Target::Nothing) | None => bail!("`{label}` was not stored"),
        }
    }

    /// The label of a returned memory, for checks and reports: the label it was stored
    /// under, or the label of a held candidate with the same content (a held label in
    /// `forbid` must catch the candidate reaching memory by any path).
    fn label_of(&self, memory: &levh_core::Memory) -> String {
        let by_id = self
            .labels
            .iter()
            .find(|(_, target)| matches!(target, Target::Memory(m) if *m == memory.id));
        let by_content = || {
            self.labels.iter().find(
                |(_, target)| matches!(target, Target::Held(_, content) if *content == memory.content),
            )
        };
        by_id.or_else(by_content).map_or_else(
            || format!("(unlabelled {})", memory.id),
            |(label, _)| label.clone(),
        )
    }

    fn step(&mut self, n: usize, step: &Step) -> Result<()> {
        let levh = self.sandbox.levh.clone();
        let scope = self.sandbox.scope.clone();
        match step {
            Step::Store(s) => {
                let kind = s.kind.as_deref().map(Kind::new).transpose()?;
                let outcome = levh.capture(
                    &scope,
                    NewMemory {
                        content: s.store.clone(),
                        project: s.project.clone(),
                        kind,
                        source: Some("eval".to_owned()),
                        importance: s.importance,
                        pinned: s.pinned,
                        ..NewMemory::default()
                    },
                )?;
                let verdict = outcome.verdict.name();
                let reason = outcome
                    .reason()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default();
                self.check(
                    n,
                    "store",
                    format!("verdict {}", s.expect.name()),
                    format!("verdict {verdict}{reason}"),
                    verdict == s.expect.name(),
                );
                let (target, content) = match (outcome.memory_id, outcome.held_id) {
                    (Some(id), _) => (Target::Memory(id), Some(levh.get(&scope, id)?.content)),
                    (None, Some(id)) => {
                        let content = levh.held_get(&scope, id)?.content;
                        (Target::Held(id, content.clone()), Some(content))
                    }
                    (None, None) => (Target::Nothing, None),
                };
                if let Some(content) = content {
                    for absent in &s.expect_absent {
                        let found = content.contains(absent.as_str());
                        self.check(
                            n,
                            "store",
                            format!("stored content lacks {absent:?}"),
                            if found {
                                format!("stored: {content:?}")
                            } else {
                                "absent".into()
                            },
                            !found,
                        );
                    }
                    for present in &s.expect_present {
                        let found = content.contains(present.as_str());
                        self.check(
                            n,
                            "store",
                            format!("stored content has {present:?}"),
                            if found {
                                "present".into()
                            } else {
                                format!("stored: {content:?}")
                            },
                            found,
                        );
                    }
                } else if !s.expect_absent.is_empty() || !s.expect_present.is_empty() {
                    self.check(
                        n,
                        "store",
                        "content to inspect".into(),
                        "nothing was stored".into(),
                        false,
                    );
                }
                if let Some(label) = &s.label {
                    self.labels.insert(label.clone(), target);
                }
            }
            Step::Decide(s) => {
                let Some(Target::Held(held, _)) = self.labels.get(&s.decide).cloned() else {
                    bail!(
                        "`{}` is not a held candidate (its store step was not held)",
                        s.decide
                    );
                };
                match s.action {
                    Decision::Admit => {
                        let admitted = levh.held_admit(&scope, held, s.supersede)?;
                        self.labels
                            .insert(s.decide.clone(), Target::Memory(admitted.memory_id));
                        if s.supersede {
                            let superseded = admitted.superseded.is_some();
                            self.check(
                                n,
                                "decide",
                                "admitted, superseding the memory that caused the hold".into(),
                                if superseded {
                                    "superseded it".into()
                                } else {
                                    "nothing superseded".into()
                                },
                                superseded,
                            );
                        }
                    }
                    Decision::Discard => {
                        levh.held_discard(&scope, held)?;
                    }
                }
            }
            Step::Advance(s) => self.sandbox.advance_hours(s.advance_days * 24.0)?,
            Step::Recall(s) => {
                let request = RecallRequest {
                    limit: s.limit,
                    project: s.project.clone(),
                    ..RecallRequest::new(s.recall.clone())
                };
                let output = levh.recall(&scope, &request)?;
                let returned: Vec<String> = output
                    .hits
                    .iter()
                    .map(|h| self.label_of(&h.memory))
                    .collect();
                let shown = format!("returned [{}]", returned.join(", "));
                if let Some(top) = &s.expect_top {
                    let first = returned.first().is_some_and(|r| r == top);
                    self.check(n, "recall", format!("`{top}` first"), shown.clone(), first);
                }
                for label in &s.expect {
                    let found = returned.contains(label);
                    self.check(
                        n,
                        "recall",
                        format!("`{label}` returned"),
                        shown.clone(),
                        found,
                    );
                }
                for label in &s.forbid {
                    let found = returned.contains(label);
                    self.check(
                        n,
                        "recall",
                        format!("`{label}` not returned"),
                        shown.clone(),
                        !found,
                    );
                }
            }
            Step::Feedback(s) => {
                levh.feedback(&scope, self.memory(&s.feedback)?, s.helpful)?;
            }
            Step::Pin(s) => {
                levh.set_pinned(&scope, self.memory(&s.label)?, true)?;
            }
            Step::Forget(s) => {
                levh.forget(&scope, self.memory(&s.label)?)?;
            }
            Step::Weaker(s) => {
                let stability = |label: &str| -> Result<f64> {
                    Ok(levh.get(&scope, self.memory(label)?)?.state.stability_hours)
                };
                let (weaker, than) = (stability(&s.weaker)?, stability(&s.than)?);
                self.check(
                    n,
                    "weaker",
                    format!("`{}` less stable than `{}`", s.weaker, s.than),
                    format!("stability {weaker:.1} h vs {than:.1} h"),
                    weaker < than,
                );
            }
            Step::Fading(s) => {
                let fading: Vec<MemoryId> = levh
                    .fading(&scope, None, levh_core::MAX_RECALL_LIMIT)?
                    .into_iter()
                    .map(|f| f.memory.id)
                    .collect();
                let now = self.sandbox.now();
                for (label, expect_fading) in s
                    .fading
                    .iter()
                    .map(|l| (l, true))
                    .chain(s.not_fading.iter().map(|l| (l, false)))
                {
                    let id = self.memory(label)?;
                    let memory = levh.get(&scope, id)?;
                    let retention = levh_core::model::retention(&memory.state, now);
                    let is_fading = fading.contains(&id);
                    self.check(
                        n,
                        "fading",
                        format!(
                            "`{label}` {}",
                            if expect_fading {
                                "fading"
                            } else {
                                "not fading"
                            }
                        ),
                        format!(
                            "{} (retention {retention:.2})",
                            if is_fading { "fading" } else { "not fading" }
                        ),
                        is_fading == expect_fading,
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_parsed_by_their_action_key() {
        let s = Scenario::parse(
            r#"{"name":"n","steps":[
                {"store":"The deploy branch is main.","as":"a","expect":"admit"},
                {"advance_days":3},
                {"recall":"deploy branch","expect_top":"a"},
                {"pin":"a"},
                {"not_fading":["a"]}
            ]}"#,
            "n.json",
        )
        .unwrap();
        assert_eq!(s.steps.len(), 5);
        assert!(matches!(s.steps[4], Step::Fading(_)));
        assert_eq!(s.requires, Requires::Any);
    }

    #[test]
    fn bad_steps_are_refused_naming_file_step_and_field() {
        let cases = [
            (
                r#"{"name":"n","steps":[{"stor":"x","expect":"admit"}]}"#,
                "step 1: no action",
            ),
            (
                r#"{"name":"n","steps":[{"store":"x","expect":"admitted"}]}"#,
                "admitted",
            ),
            (
                r#"{"name":"n","steps":[{"store":"x","expect":"admit","pin":"a"}]}"#,
                "2 actions",
            ),
            (
                r#"{"name":"n","steps":[{"store":"x","expect":"admit"},{"recall":"x","expect_top":"a"}]}"#,
                "step 2: label `a` is not named",
            ),
            (
                r#"{"name":"n","steps":[{"recall":"x","limt":3}]}"#,
                "unknown field `limt`",
            ),
            (r#"{"name":"n","steps":[{"advance_days":-1}]}"#, "≥ 0"),
            (r#"{"name":"n","steps":[]}"#, "`steps` is empty"),
        ];
        for (text, wanted) in cases {
            let error = format!("{:#}", Scenario::parse(text, "bad.json").unwrap_err());
            assert!(error.contains("bad.json"), "{error}");
            assert!(error.contains(wanted), "{wanted:?} not in {error:?}");
        }
    }

    #[test]
    fn reports_of_another_version_are_refused() {
        let e = EvalReport::parse(r#"{"evaluation_version": 99}"#, "old.json").unwrap_err();
        assert!(format!("{e:#}").contains("version 99"), "{e:#}");
    }

    #[test]
    fn every_shipped_scenario_parses() {
        let scenarios = builtin().unwrap();
        assert!(scenarios.len() >= 10, "{} scenarios", scenarios.len());
        let mut names: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), scenarios.len(), "scenario names are unique");
    }
}
