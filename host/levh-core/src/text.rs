//! Text helpers shared by recall, interference and (later) the gate: word tokens, a
//! word-set Jaccard measure, a content hash, previews and a token estimate.

use std::collections::HashSet;

use unicode_segmentation::UnicodeSegmentation;

/// Common English function words. They say little about what a text is about, so the
/// hash embedder and full-text candidate queries leave them out.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "does", "for", "from", "has",
    "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "she", "so", "that", "the", "their", "them", "they", "this", "to", "was", "we", "were",
    "what", "when", "where", "which", "who", "will", "with", "you", "your",
];

/// Whether a lowercased word is a [`STOPWORDS`] entry.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// The words of `text` that carry meaning: stopwords removed, unless nothing else is left
/// (a query of only stopwords still searches for them).
pub fn content_words(text: &str) -> Vec<String> {
    let all: Vec<String> = words(text).collect();
    let meaningful: Vec<String> = all.iter().filter(|w| !is_stopword(w)).cloned().collect();
    if meaningful.is_empty() {
        all
    } else {
        meaningful
    }
}

/// Lowercased Unicode words of `text` (UAX #29 word boundaries, punctuation dropped).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.unicode_words().map(str::to_lowercase)
}

/// Jaccard similarity of the two texts' word sets, 0..=1. Two empty texts are identical.
pub fn word_jaccard(a: &str, b: &str) -> f64 {
    let a: HashSet<String> = words(a).collect();
    let b: HashSet<String> = words(b).collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = a.intersection(&b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// A stable hash of the content after whitespace and case normalisation, so trivially
/// re-spaced copies hash alike. Hex, 32 characters (xxh3-128).
pub fn content_hash(content: &str) -> String {
    let normal: Vec<String> = content.split_whitespace().map(str::to_lowercase).collect();
    format!(
        "{:032x}",
        xxhash_rust::xxh3::xxh3_128(normal.join(" ").as_bytes())
    )
}

/// A rough token count (≈ 4 characters per token, the usual English rule of thumb),
/// enough to fill a `max_tokens` budget without a tokenizer per model.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4).max(1)
}

/// The first `max_chars` characters of `text` on one line, with `…` when cut.
pub fn preview(text: &str, max_chars: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max_chars {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_of_word_sets() {
        assert_eq!(word_jaccard("the cat sat", "The cat, sat!"), 1.0);
        assert!((word_jaccard("a b c d", "a b c e") - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(word_jaccard("alpha", "beta"), 0.0);
    }

    #[test]
    fn hash_ignores_spacing_and_case() {
        assert_eq!(
            content_hash("Deploy  on Friday"),
            content_hash("deploy on\nfriday")
        );
        assert_ne!(
            content_hash("deploy on friday"),
            content_hash("deploy on monday")
        );
    }

    #[test]
    fn previews_are_cut_on_characters() {
        assert_eq!(preview("short", 10), "short");
        assert_eq!(preview("çok uzun bir cümle", 8), "çok uzu…");
        assert_eq!(estimate_tokens("12345678"), 2);
    }
}
