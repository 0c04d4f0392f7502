//! Views of recall: hits (full, compact, explained) and the session context.

use super::*;

/// One recall result: the memory as it was scored, or (compact) only what names it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HitEntry {
    /// The memory and its scores.
    Full(Box<HitView>),
    /// Only id, preview and score (`compact`).
    Compact(CompactHitView),
}

/// One recall result in full.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HitView {
    /// The memory, as it was scored.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// What ranked it, lower is better: the H-score, or the active scorer's score.
    pub score: f64,
    /// `h-score`, or the id of the scorer plugin that ranked the results.
    pub ranked_by: String,
    /// Its H-score (the same as `score` unless a scorer ranked the results).
    pub h_score: f64,
    /// Relevance to the query, 0..1: lexical (BM25) and semantic (cosine) evidence fused.
    pub relevance: f64,
    /// Cosine similarity to the query, 0..1 (the semantic part of the relevance).
    pub similarity: f64,
    /// BM25, normalised by the query's best, 0..1 (the lexical part; 0 when no word
    /// matched).
    pub lexical: f64,
    /// Whether the full-text index found it (a word of the query matched).
    pub lexical_match: bool,
    /// The H-score's terms and the relevance's parts (with `explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<ExplainView>,
}

/// One recall result, compact.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompactHitView {
    /// The memory's id.
    pub id: String,
    /// The start of its content.
    pub preview: String,
    /// What ranked it, lower is better.
    pub score: f64,
}

/// Why a result ranked where it did: the four weighted H-score terms (lower is better;
/// their sum is the H-score) and the evidence its relevance was fused from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExplainView {
    /// α·(1−relevance).
    pub relevance_term: f64,
    /// β·(1−retention).
    pub retention_term: f64,
    /// γ·(1−importance).
    pub importance_term: f64,
    /// δ·(1−frequency).
    pub frequency_term: f64,
    /// The raw BM25 score, when a word of the query matched.
    pub bm25: Option<f64>,
    /// Rank among the full-text candidates.
    pub lexical_rank: Option<usize>,
    /// Rank among the vector candidates.
    pub vector_rank: Option<usize>,
}

/// How recall results are shaped.
#[derive(Debug, Clone, Copy, Default)]
pub struct HitShape {
    /// Only id, preview and score.
    pub compact: bool,
    /// With the score's terms.
    pub explain: bool,
}

impl HitView {
    /// The view of one hit of a recall ranked by `ranked_by`.
    pub fn new(hit: &levh_core::RecallHit, ranked_by: &str, levh: &Levh) -> Self {
        Self {
            memory: MemoryView::of(levh, &hit.memory),
            score: hit.policy_score.unwrap_or(hit.score.score),
            ranked_by: ranked_by.to_owned(),
            h_score: hit.score.score,
            relevance: hit.relevance.value,
            similarity: hit.relevance.semantic,
            lexical: hit.relevance.lexical,
            lexical_match: hit.lexical_match,
            explain: None,
        }
    }
}

impl HitEntry {
    /// One hit shaped as asked.
    pub fn new(hit: &levh_core::RecallHit, ranked_by: &str, levh: &Levh, shape: HitShape) -> Self {
        if shape.compact {
            return Self::Compact(CompactHitView {
                id: hit.memory.id.to_string(),
                preview: levh_core::text::preview(&hit.memory.content, levh_core::PREVIEW_CHARS),
                score: hit.policy_score.unwrap_or(hit.score.score),
            });
        }
        let mut view = HitView::new(hit, ranked_by, levh);
        if shape.explain {
            let terms = hit.score.terms;
            view.explain = Some(ExplainView {
                relevance_term: terms.relevance,
                retention_term: terms.retention,
                importance_term: terms.importance,
                frequency_term: terms.frequency,
                bm25: hit.relevance.bm25,
                lexical_rank: hit.relevance.lexical_rank,
                vector_rank: hit.relevance.vector_rank,
            });
        }
        Self::Full(Box::new(view))
    }
}

/// The result of a recall or a search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecallView {
    /// Best first.
    pub results: Vec<HitEntry>,
    /// How many memories were considered before ranking.
    pub candidates: usize,
    /// `h-score`, or the id of the scorer plugin that ranked the results.
    pub ranked_by: String,
    /// Ids of the memories this call reinforced (empty for a search).
    pub reinforced: Vec<String>,
    /// Estimated tokens of the returned content.
    pub tokens: usize,
    /// Results left out by the token budget.
    pub omitted_by_budget: usize,
    /// Anything that went wrong on the way.
    pub warnings: Vec<String>,
}

impl RecallView {
    /// The view of a recall's output, retention computed at `now`, hits shaped as asked.
    pub fn new(output: &levh_core::RecallOutput, levh: &Levh, shape: HitShape) -> Self {
        Self {
            results: output
                .hits
                .iter()
                .map(|hit| HitEntry::new(hit, &output.ranked_by, levh, shape))
                .collect(),
            candidates: output.candidates,
            ranked_by: output.ranked_by.clone(),
            reinforced: output.reinforced.iter().map(|id| id.to_string()).collect(),
            tokens: output.tokens,
            omitted_by_budget: output.omitted_by_budget,
            warnings: output.warnings.clone(),
        }
    }
}

/// Generated context for a session: pinned rules first, then the project's essentials.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContextView {
    /// The project it was generated for.
    pub project: Option<String>,
    /// Pinned memories (rules that never fade).
    pub pinned: Vec<MemoryView>,
    /// The most important, best-retained memories besides.
    pub essentials: Vec<MemoryView>,
    /// Estimated tokens used.
    pub tokens: usize,
    /// Memories left out by the token budget.
    pub omitted: usize,
    /// The same as Markdown, ready to read.
    pub text: String,
}
