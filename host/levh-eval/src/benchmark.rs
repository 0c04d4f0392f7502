//! The recall benchmark: a labelled query set loaded into a fresh store through the gate,
//! then searched (without reinforcement, so one query cannot help the next); reports
//! hit@1/3/5 and MRR@10 per slice, and checks them against the dataset's thresholds.
//!
//! The dataset shipped with levh is `fixtures/benchmark/recall.json` ([`BUILTIN`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use levh_core::{Config, Embedder, Kind, MemoryId, NewMemory, RecallRequest};
use serde::{Deserialize, Serialize};

use crate::{Sandbox, measure_name};

/// The dataset shipped with levh.
pub const BUILTIN: &str = include_str!("../../../fixtures/benchmark/recall.json");

/// Results asked of every query: MRR is computed over these, hit@k for k ≤ 5.
pub const DEPTH: usize = 10;

/// The slice name that stands for every query in thresholds and reports.
pub const ALL: &str = "all";

/// A labelled query set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// Its name.
    pub name: String,
    /// Its version: results of different versions are not comparable.
    pub version: u32,
    /// What it measures and how it was built.
    #[serde(default)]
    pub description: String,
    /// The corpus, stored in this order.
    pub memories: Vec<DatasetMemory>,
    /// The labelled queries.
    pub queries: Vec<LabelledQuery>,
    /// Minimums by measure (`lexical`, `semantic`), then by slice (or `all`).
    #[serde(default)]
    pub thresholds: BTreeMap<String, BTreeMap<String, Thresholds>>,
}

/// One memory of the corpus.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetMemory {
    /// The label queries refer to it by.
    pub id: String,
    /// Its text.
    pub content: String,
    /// Its kind (`note` when absent).
    #[serde(default)]
    pub kind: Option<String>,
    /// Its project.
    #[serde(default)]
    pub project: Option<String>,
}

/// A query and the memories that answer it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledQuery {
    /// The query text.
    pub query: String,
    /// Labels of the memories that answer it; finding any one counts.
    pub expect: Vec<String>,
    /// Which slice it belongs to (`exact`, `paraphrase`, `distractor`, `non-english`, ...).
    pub slice: String,
    /// Near-miss memories that share words with the query but do not answer it.
    #[serde(default)]
    pub distractors: Vec<String>,
    /// Restrict the search to this project.
    #[serde(default)]
    pub project: Option<String>,
}

/// Minimum scores; an absent one is not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Minimum hit@1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_1: Option<f64>,
    /// Minimum hit@3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_3: Option<f64>,
    /// Minimum hit@5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_5: Option<f64>,
    /// Minimum MRR@10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrr: Option<f64>,
}

impl Dataset {
    /// Parses and checks a dataset; `origin` (a path, or `built-in`) names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let dataset: Self = serde_json::from_str(text)
            .with_context(|| format!("{origin} is not a valid benchmark dataset"))?;
        dataset
            .check()
            .with_context(|| format!("{origin} is not a valid benchmark dataset"))?;
        Ok(dataset)
    }

    /// The dataset shipped with levh.
    pub fn builtin() -> Result<Self> {
        Self::parse(
            BUILTIN,
            "the built-in dataset (fixtures/benchmark/recall.json)",
        )
    }

    fn check(&self) -> Result<()> {
        if self.memories.is_empty() || self.queries.is_empty() {
            bail!("it needs at least one memory and one query");
        }
        let mut ids = HashSet::new();
        for (n, memory) in self.memories.iter().enumerate() {
            if memory.id.trim().is_empty() {
                bail!("memories[{n}]: `id` is empty");
            }
            if !ids.insert(memory.id.as_str()) {
                bail!("memories[{n}]: id `{}` is used twice", memory.id);
            }
            if let Some(kind) = &memory.kind {
                Kind::new(kind)
                    .with_context(|| format!("memories[{n}] (`{}`): kind", memory.id))?;
            }
        }
        for (n, query) in self.queries.iter().enumerate() {
            if query.query.trim().is_empty() {
                bail!("queries[{n}]: `query` is empty");
            }
            if query.slice.trim().is_empty() || query.slice == ALL {
                bail!("queries[{n}]: `slice` must name a slice other than `{ALL}`");
            }
            if query.expect.is_empty() {
                bail!("queries[{n}] ({:?}): `expect` is empty", query.query);
            }
            for label in query.expect.iter().chain(&query.distractors) {
                if !ids.contains(label.as_str()) {
                    bail!(
                        "queries[{n}] ({:?}): `{label}` is not the id of any memory",
                        query.query
                    );
                }
            }
        }
        let slices: HashSet<&str> = self.queries.iter().map(|q| q.slice.as_str()).collect();
        for (measure, by_slice) in &self.thresholds {
            if measure != "lexical" && measure != "semantic" {
                bail!("thresholds: `{measure}` is not a measure (use `lexical` or `semantic`)");
            }
            for (slice, thresholds) in by_slice {
                if slice != ALL && !slices.contains(slice.as_str()) {
                    bail!("thresholds.{measure}: no query is in slice `{slice}`");
                }
                for (name, value) in thresholds.named() {
                    if !(0.0..=1.0).contains(&value) {
                        bail!("thresholds.{measure}.{slice}.{name}: {value} is outside 0..=1");
                    }
                }
            }
        }
        Ok(())
    }
}

impl Thresholds {
    /// The thresholds that are set, by metric name.
    fn named(&self) -> Vec<(&'static str, f64)> {
        [
            ("hit_at_1", self.hit_at_1),
            ("hit_at_3", self.hit_at_3),
            ("hit_at_5", self.hit_at_5),
            ("mrr", self.mrr),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name, v)))
        .collect()
    }
}

/// Scores of one slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceScore {
    /// The slice (`all` for every query).
    pub slice: String,
    /// How many queries.
    pub queries: usize,
    /// Share of queries answered by the first result.
    pub hit_at_1: f64,
    /// ... within the first three.
    pub hit_at_3: f64,
    /// ... within the first five.
    pub hit_at_5: f64,
    /// Mean reciprocal rank of the first answering result within the first ten (0 when
    /// none answers).
    pub mrr: f64,
}

impl SliceScore {
    fn metric(&self, name: &str) -> f64 {
        match name {
            "hit_at_1" => self.hit_at_1,
            "hit_at_3" => self.hit_at_3,
            "hit_at_5" => self.hit_at_5,
            _ => self.mrr,
        }
    }
}

/// What one query found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    /// The query.
    pub query: String,
    /// Its slice.
    pub slice: String,
    /// The labels that answer it.
    pub expect: Vec<String>,
    /// 1-based rank of the first answering result, if within the first ten.
    pub rank: Option<usize>,
    /// The labels of the first three results.
    pub top: Vec<String>,
}

/// A benchmark run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchmarkReport {
    /// The dataset's name.
    pub dataset: String,
    /// The dataset's version.
    pub dataset_version: u32,
    /// The embedder's model id.
    pub embedder: String,
    /// `semantic` or `lexical`.
    pub measure: String,
    /// Memories stored.
    pub memories: usize,
    /// Every query, then each slice in name order.
    pub scores: Vec<SliceScore>,
    /// Time to store the corpus through the gate, milliseconds.
    pub ingest_ms: f64,
    /// Median search time of a query, milliseconds.
    pub search_p50_ms: f64,
    /// 99th percentile search time, milliseconds.
    pub search_p99_ms: f64,
    /// Every query's outcome, in dataset order.
    pub queries: Vec<QueryOutcome>,
}

impl BenchmarkReport {
    /// The score of `slice` (`all` for every query).
    pub fn score(&self, slice: &str) -> Option<&SliceScore> {
        self.scores.iter().find(|s| s.slice == slice)
    }
}

/// Loads the corpus into a fresh store and runs every query.
pub fn run(
    dataset: &Dataset,
    embedder: Arc<dyn Embedder>,
    config: Config,
) -> Result<BenchmarkReport> {
    let embedder_id = embedder.model_id().to_owned();
    let measure = measure_name(embedder.as_ref());
    let sandbox = Sandbox::new(embedder, config)?;
    let levh = &sandbox.levh;

    let started = Instant::now();
    let mut labels: HashMap<MemoryId, &str> = HashMap::new();
    for memory in &dataset.memories {
        let kind = memory.kind.as_deref().map(Kind::new).transpose()?;
        let outcome = levh
            .capture(
                &sandbox.scope,
                NewMemory {
                    content: memory.content.clone(),
                    project: memory.project.clone(),
                    kind,
                    source: Some("benchmark".to_owned()),
                    ..NewMemory::default()
                },
            )
            .with_context(|| format!("storing memory `{}`", memory.id))?;
        let Some(id) = outcome.memory_id else {
            let nearest = outcome
                .nearest()
                .and_then(|n| {
                    labels
                        .get(&n.id)
                        .map(|label| format!(" (closest: `{label}`)"))
                })
                .unwrap_or_default();
            bail!(
                "dataset {}: memory `{}` was not stored: the gate said {}{nearest} with the {} \
                 embedder; corpus memories must be distinct facts",
                dataset.name,
                memory.id,
                outcome.verdict.name(),
                embedder_id
            );
        };
        labels.insert(id, &memory.id);
    }
    let ingest_ms = started.elapsed().as_secs_f64() * 1e3;

    let mut outcomes = Vec::with_capacity(dataset.queries.len());
    let mut timings = Vec::with_capacity(dataset.queries.len());
    for query in &dataset.queries {
        let request = RecallRequest {
            limit: DEPTH,
            project: query.project.clone(),
            reinforce: false,
            ..RecallRequest::new(query.query.clone())
        };
        let started = Instant::now();
        let output = levh
            .recall(&sandbox.scope, &request)
            .with_context(|| format!("searching {:?}", query.query))?;
        timings.push(started.elapsed().as_secs_f64() * 1e3);
        let found: Vec<&str> = output
            .hits
            .iter()
            .map(|hit| labels.get(&hit.memory.id).copied().unwrap_or("?"))
            .collect();
        outcomes.push(QueryOutcome {
            query: query.query.clone(),
            slice: query.slice.clone(),
            expect: query.expect.clone(),
            rank: found
                .iter()
                .position(|label| query.expect.iter().any(|e| e == label))
                .map(|i| i + 1),
            top: found.iter().take(3).map(|s| (*s).to_owned()).collect(),
        });
    }

    let mut slices: Vec<&str> = outcomes.iter().map(|o| o.slice.as_str()).collect();
    slices.sort_unstable();
    slices.dedup();
    let mut scores = vec![score(ALL, outcomes.iter())];
    scores.extend(
        slices
            .iter()
            .map(|slice| score(slice, outcomes.iter().filter(|o| o.slice == *slice))),
    );
    timings.sort_by(f64::total_cmp);
    Ok(BenchmarkReport {
        dataset: dataset.name.clone(),
        dataset_version: dataset.version,
        embedder: embedder_id,
        measure: measure.to_owned(),
        memories: dataset.memories.len(),
        scores,
        ingest_ms,
        search_p50_ms: percentile(&timings, 0.50),
        search_p99_ms: percentile(&timings, 0.99),
        queries: outcomes,
    })
}

fn score<'a>(slice: &str, outcomes: impl Iterator<Item = &'a QueryOutcome>) -> SliceScore {
    let ranks: Vec<Option<usize>> = outcomes.map(|o| o.rank).collect();
    let n = ranks.len().max(1) as f64;
    let hit = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
    SliceScore {
        slice: slice.to_owned(),
        queries: ranks.len(),
        hit_at_1: hit(1),
        hit_at_3: hit(3),
        hit_at_5: hit(5),
        mrr: ranks.iter().flatten().map(|r| 1.0 / *r as f64).sum::<f64>() / n,
    }
}

/// Nearest-rank percentile of sorted values.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One threshold compared with its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdCheck {
    /// The slice.
    pub slice: String,
    /// `hit_at_1`, `hit_at_3`, `hit_at_5` or `mrr`.
    pub metric: String,
    /// The minimum.
    pub minimum: f64,
    /// The score.
    pub actual: f64,
    /// `actual >= minimum`.
    pub passed: bool,
}

/// Compares a report with the dataset's thresholds for the report's measure. An error
/// when the dataset sets none for it: a check that checks nothing must not pass.
pub fn check(dataset: &Dataset, report: &BenchmarkReport) -> Result<Vec<ThresholdCheck>> {
    let Some(by_slice) = dataset.thresholds.get(&report.measure) else {
        bail!(
            "dataset {} sets no thresholds for {} embedders, so there is nothing to check",
            dataset.name,
            report.measure
        );
    };
    let mut checks = Vec::new();
    for (slice, thresholds) in by_slice {
        let score = report
            .score(slice)
            .with_context(|| format!("the report has no slice `{slice}`"))?;
        for (metric, minimum) in thresholds.named() {
            let actual = score.metric(metric);
            checks.push(ThresholdCheck {
                slice: slice.clone(),
                metric: metric.to_owned(),
                minimum,
                actual,
                // Scores are ratios of small counts: compare with a hair of tolerance so
                // a threshold set to a measured 0.7 is met by that same 0.7.
                passed: actual + 1e-9 >= minimum,
            });
        }
    }
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(slice: &str, rank: Option<usize>) -> QueryOutcome {
        QueryOutcome {
            query: "q".into(),
            slice: slice.into(),
            expect: vec!["a".into()],
            rank,
            top: vec![],
        }
    }

    #[test]
    fn scores_count_hits_and_reciprocal_ranks() {
        let outcomes = [
            outcome("p", Some(1)),
            outcome("p", Some(2)),
            outcome("p", Some(4)),
            outcome("p", None),
        ];
        let s = score("p", outcomes.iter());
        assert_eq!(s.queries, 4);
        assert_eq!(s.hit_at_1, 0.25);
        assert_eq!(s.hit_at_3, 0.5);
        assert_eq!(s.hit_at_5, 0.75);
        assert!((s.mrr - (1.0 + 0.5 + 0.25) / 4.0).abs() < 1e-12);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&[3.0], 0.99), 3.0);
    }

    #[test]
    fn bad_datasets_are_refused_naming_the_place() {
        let unknown = r#"{"name":"d","version":1,"memories":[{"id":"a","content":"alpha beta gamma"}],
            "queries":[{"query":"q","expect":["b"],"slice":"exact"}]}"#;
        let e = format!("{:#}", Dataset::parse(unknown, "x.json").unwrap_err());
        assert!(
            e.contains("x.json") && e.contains("queries[0]") && e.contains("`b`"),
            "{e}"
        );

        let twice = r#"{"name":"d","version":1,"memories":[{"id":"a","content":"x y z"},{"id":"a","content":"u v w"}],
            "queries":[{"query":"q","expect":["a"],"slice":"exact"}]}"#;
        let e = format!("{:#}", Dataset::parse(twice, "x.json").unwrap_err());
        assert!(e.contains("memories[1]") && e.contains("used twice"), "{e}");

        let typo = r#"{"name":"d","version":1,"memories":[{"id":"a","content":"x y z"}],
            "queries":[{"query":"q","expect":["a"],"slice":"exact","expected":["a"]}]}"#;
        let e = format!("{:#}", Dataset::parse(typo, "x.json").unwrap_err());
        assert!(e.contains("expected"), "{e}");

        let range = r#"{"name":"d","version":1,"memories":[{"id":"a","content":"x y z"}],
            "queries":[{"query":"q","expect":["a"],"slice":"exact"}],
            "thresholds":{"semantic":{"exact":{"mrr":1.5}}}}"#;
        let e = format!("{:#}", Dataset::parse(range, "x.json").unwrap_err());
        assert!(e.contains("thresholds.semantic.exact.mrr"), "{e}");
    }

    #[test]
    fn a_check_without_thresholds_for_the_measure_is_an_error() {
        let dataset = Dataset::parse(
            r#"{"name":"d","version":1,"memories":[{"id":"a","content":"x y z"}],
            "queries":[{"query":"q","expect":["a"],"slice":"exact"}],
            "thresholds":{"semantic":{"all":{"mrr":0.5}}}}"#,
            "x.json",
        )
        .unwrap();
        let mut report = BenchmarkReport {
            dataset: "d".into(),
            dataset_version: 1,
            embedder: "hash-v1-256".into(),
            measure: "lexical".into(),
            memories: 1,
            scores: vec![score(ALL, [outcome("exact", Some(2))].iter())],
            ingest_ms: 0.0,
            search_p50_ms: 0.0,
            search_p99_ms: 0.0,
            queries: vec![],
        };
        assert!(check(&dataset, &report).is_err());
        report.measure = "semantic".into();
        let checks = check(&dataset, &report).unwrap();
        assert_eq!(checks.len(), 1);
        assert!(checks[0].passed, "MRR 0.5 meets a 0.5 minimum");
        report.scores[0].mrr = 0.49;
        assert!(!check(&dataset, &report).unwrap()[0].passed);
    }
}
