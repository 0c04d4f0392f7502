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

/// Words a query may use that say nothing about what it looks for: [`STOPWORDS`], the rest
/// of English's function words, question words and the verbs of asking ("what did she
/// say about…"). Full-text queries leave them out, so that a question's "what", "did" and
/// "about" do not have to match — and do not favour memories full of them. (Kept apart
/// from [`STOPWORDS`], which the hash embedder's frozen vectors depend on.)
pub const QUERY_STOPWORDS: &[&str] = &[
    "a",
    "about",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "for",
    "from",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "me",
    "mention",
    "mentioned",
    "my",
    "of",
    "on",
    "or",
    "our",
    "say",
    "said",
    "she",
    "should",
    "so",
    "some",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "told",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
];

/// The words of a query worth matching in the full-text index: lowercased, without
/// [`QUERY_STOPWORDS`], each once, in order of first use. A query of nothing but such
/// words keeps them all, so it still searches for something.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for word in words(query) {
        // "what's" → "what", "nadia's" → "nadia": possessives and contractions add nothing.
        let word = word
            .strip_suffix("'s")
            .or_else(|| word.strip_suffix("’s"))
            .map(str::to_owned)
            .unwrap_or(word);
        if !all.contains(&word) {
            all.push(word);
        }
    }
    let meaningful: Vec<String> = all
        .iter()
        .filter(|w| !QUERY_STOPWORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    if meaningful.is_empty() {
        all
    } else {
        meaningful
    }
}

/// Who a text is attributed to, when it starts like a line of a transcript or chat:
/// `Name: …` with one to three capitalised words before the colon ("Nadia: see you!",
/// "Dr Ruth Cole: …"). `None` otherwise — a time ("9:30: standup") or a URL is no name.
pub fn attribution(text: &str) -> Option<&str> {
    let (name, rest) = text.trim_start().split_once(':')?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) || name.chars().count() > 40 {
        return None;
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    let named = (1..=3).contains(&words.len())
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars()
                    .all(|c| c.is_alphabetic() || c == '.' || c == '-' || c == '\'')
        });
    named.then_some(name.trim())
}

/// Whether a text asks rather than tells: its last sentence ends with a question mark
/// (closing quotes, brackets and emoji after it aside).
pub fn is_question(text: &str) -> bool {
    text.trim_end()
        .trim_end_matches(|c: char| {
            c.is_whitespace()
                || matches!(c, '"' | '\'' | ')' | ']' | '”' | '’' | '»')
                || !c.is_ascii() && !c.is_alphanumeric() && c != '?' && c != '？'
        })
        .ends_with(['?', '？'])
}

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
pub fn words(text: &str) -> Words<'_> {
    match without_invisible(text) {
        std::borrow::Cow::Borrowed(text) => Words::Plain(text.unicode_words()),
        std::borrow::Cow::Owned(cleaned) => Words::Cleaned(
            cleaned
                .unicode_words()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
                .into_iter(),
        ),
    }
}

/// The lower-cased words of a text ([`words`]): read in place, or from a copy when the
/// text held invisible characters to drop first.
#[derive(Debug)]
pub enum Words<'a> {
    /// The text as it is.
    Plain(unicode_segmentation::UnicodeWords<'a>),
    /// Words of the text without its invisible characters.
    Cleaned(std::vec::IntoIter<String>),
}

impl Iterator for Words<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        match self {
            Self::Plain(words) => words.next().map(str::to_lowercase),
            Self::Cleaned(words) => words.next(),
        }
    }
}

/// The numbers a text mentions: every word with a digit in it, sorted ("9:30" gives `9`
/// and `30`, "v2.1" gives `v2.1`). Two texts that differ here state different facts however
/// alike they read.
pub fn numbers(text: &str) -> Vec<String> {
    let mut numbers: Vec<String> = words(text)
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .collect();
    numbers.sort_unstable();
    numbers
}

/// Whether the two texts use the same words, ignoring case, punctuation, spacing, order of
/// repetition and [`STOPWORDS`]. The gate's test for a duplicate: however close two texts'
/// embeddings, a text that swaps one word for another ("Thursday" → "Wednesday", "9:30" →
/// "9:45") may state a new fact, so it is held for a person rather than dropped.
pub fn same_words(a: &str, b: &str) -> bool {
    let set = |text: &str| -> HashSet<String> { words(text).filter(|w| !is_stopword(w)).collect() };
    set(a) == set(b)
}

/// How far two texts agree in what they say, 0..=1: Jaccard similarity of their content
/// words (without [`QUERY_STOPWORDS`] or a `Speaker:` attribution), each cut to its first
/// five letters so "allergic"/"allergy" and "peanuts"/"peanut" agree. Names, numbers and
/// content words count; wording does not. Two texts without content words agree fully.
///
/// The gate's test, with a model, that a close candidate shares the facts of the memory
/// it resembles and not only the tone ([`crate::gate::decide`]).
pub fn content_agreement(a: &str, b: &str) -> f64 {
    let (a, b) = (content_stems(a), content_stems(b));
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let shared = a.intersection(&b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

/// The content words two texts share, each as its first five letters (as
/// [`content_agreement`] counts them), sorted: what makes one text about the other
/// ("migration" and "migrate" share `migra`).
pub fn shared_content_stems(a: &str, b: &str) -> Vec<String> {
    let mut shared: Vec<String> = content_stems(a)
        .intersection(&content_stems(b))
        .cloned()
        .collect();
    shared.sort_unstable();
    shared
}

/// A text's content words cut to five letters: without [`QUERY_STOPWORDS`] or a
/// `Speaker:` attribution.
fn content_stems(text: &str) -> HashSet<String> {
    let body = match attribution(text) {
        Some(_) => text.split_once(':').map_or(text, |(_, rest)| rest),
        None => text,
    };
    words(body)
        .filter(|w| !QUERY_STOPWORDS.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect())
        .collect()
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

/// The lexical near-duplicate measure: Jaccard similarity of the two texts' word
/// shingles (single words and adjacent word pairs, lowercased, punctuation dropped), 0..=1.
///
/// Pairs keep word order in play, so "tabs over spaces" and "spaces over tabs" differ,
/// and a changed number or name drops every shingle it takes part in. This is what the
/// gate and interference use when no semantic model is loaded; the thresholds that go
/// with it were chosen on `fixtures/gate/near-duplicates.jsonl`.
pub fn shingle_similarity(a: &str, b: &str) -> f64 {
    Shingles::of(a).similarity(&Shingles::of(b))
}

/// A text's word shingles (words and adjacent pairs), hashed: computed once and compared
/// with many others (the gate compares each candidate with up to twenty memories).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shingles(HashSet<u64>);

impl Shingles {
    /// The shingles of `text`.
    pub fn of(text: &str) -> Self {
        let words: Vec<String> = words(text).collect();
        let hash = |s: &str| xxhash_rust::xxh3::xxh3_64(s.as_bytes());
        let pairs = words.windows(2).map(|pair| {
            let mut joined = String::with_capacity(pair[0].len() + pair[1].len() + 1);
            joined.push_str(&pair[0]);
            joined.push(' ');
            joined.push_str(&pair[1]);
            hash(&joined)
        });
        Self(pairs.chain(words.iter().map(|w| hash(w))).collect())
    }

    /// Jaccard similarity of two shingle sets (1 for two empty texts).
    pub fn similarity(&self, other: &Self) -> f64 {
        if self.0.is_empty() && other.0.is_empty() {
            return 1.0;
        }
        let (small, large) = if self.0.len() <= other.0.len() {
            (&self.0, &other.0)
        } else {
            (&other.0, &self.0)
        };
        let shared = small.iter().filter(|s| large.contains(s)).count();
        shared as f64 / (self.0.len() + other.0.len() - shared) as f64
    }
}

/// Locality-sensitive keys of a text's word shingles (MinHash, 21 bands of 3 rows).
///
/// Two texts share at least one key with probability 1 − (1 − J³)²¹ for shingle
/// Jaccard J: ≥ 0.94 at J = 0.5 (the lexical review threshold), > 0.99 from J = 0.6, and
/// about 2% at J = 0.1. Indexed, these keys find near-duplicate candidates in a store of
/// any size without scanning it; the exact [`shingle_similarity`] then decides.
pub fn near_duplicate_keys(text: &str) -> Vec<i64> {
    const BANDS: usize = 21;
    const ROWS: usize = 3;
    let words: Vec<String> = words(text).collect();
    let shingles: HashSet<String> = words
        .windows(2)
        .map(|pair| format!("{} {}", pair[0], pair[1]))
        .chain(words.iter().cloned())
        .collect();
    if shingles.is_empty() {
        return Vec::new();
    }
    let signature: Vec<u64> = (0..(BANDS * ROWS) as u64)
        .map(|seed| {
            shingles
                .iter()
                .map(|s| xxhash_rust::xxh3::xxh3_64_with_seed(s.as_bytes(), seed))
                .min()
                .unwrap_or(0)
        })
        .collect();
    signature
        .chunks(ROWS)
        .enumerate()
        .map(|(band, rows)| {
            let mut bytes = Vec::with_capacity(8 * (ROWS + 1));
            bytes.extend_from_slice(&(band as u64).to_le_bytes());
            rows.iter()
                .for_each(|r| bytes.extend_from_slice(&r.to_le_bytes()));
            xxhash_rust::xxh3::xxh3_64(&bytes) as i64
        })
        .collect()
}

/// A stable hash of the content after whitespace and case normalisation, so trivially
/// re-spaced copies hash alike. Hex, 32 characters (xxh3-128).
pub fn content_hash(content: &str) -> String {
    let content = without_invisible(content);
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
    fn attribution_finds_speakers_not_times_or_labels_with_numbers() {
        assert_eq!(attribution("Nadia: see you soon!"), Some("Nadia"));
        assert_eq!(
            attribution("  Dr Ruth Cole: the knee is better"),
            Some("Dr Ruth Cole")
        );
        assert_eq!(attribution("Jean-Luc: oui"), Some("Jean-Luc"));
        assert_eq!(attribution("9:30: standup"), None);
        assert_eq!(attribution("https://example.com is down"), None);
        assert_eq!(attribution("we decided: ship it"), None);
        assert_eq!(
            attribution("The team that owns billing decided: ship"),
            None
        );
        assert_eq!(attribution("no colon here"), None);
    }

    #[test]
    fn questions_are_told_from_statements() {
        assert!(is_question("Hey Gina! How's the store going?"));
        assert!(is_question("Did you fix it? 🙂"));
        assert!(is_question("(really?)"));
        assert!(!is_question("The store's doing great!"));
        assert!(!is_question("Is it? Yes, it is."));
    }

    #[test]
    fn query_terms_drop_question_words_and_possessives() {
        assert_eq!(
            query_terms("What did Nadia's son say about the band?"),
            ["nadia", "son", "band"]
        );
        assert_eq!(query_terms("what is it"), ["what", "is", "it"]);
        assert!(query_terms("  ?! ").is_empty());
    }

    #[test]
    fn jaccard_of_word_sets() {
        assert_eq!(word_jaccard("the cat sat", "The cat, sat!"), 1.0);
        assert!((word_jaccard("a b c d", "a b c e") - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(word_jaccard("alpha", "beta"), 0.0);
    }

    #[test]
    fn shingles_see_order_and_changed_facts() {
        assert_eq!(
            shingle_similarity("Tabs over spaces.", "tabs over spaces"),
            1.0
        );
        assert!(shingle_similarity("tabs over spaces", "spaces over tabs") < 0.5);
        // 7 words + 6 pairs each; 6 words and 5 pairs shared: 11 / 15
        let s = shingle_similarity(
            "The deploy branch for atlas is main.",
            "The deploy branch for atlas is prod.",
        );
        assert!((s - 11.0 / 15.0).abs() < 1e-12, "{s}");
    }

    #[test]
    fn near_duplicates_share_keys_and_unrelated_texts_do_not() {
        let a = near_duplicate_keys("The deploy branch for atlas is main.");
        assert_eq!(a.len(), 21);
        assert_eq!(
            a,
            near_duplicate_keys("the deploy branch for Atlas is main")
        );
        let b = near_duplicate_keys("The deploy branch for atlas is prod.");
        assert!(a.iter().any(|k| b.contains(k)));
        let c = near_duplicate_keys("Kafka consumer lag alerts fire after five minutes");
        assert!(!a.iter().any(|k| c.contains(k)));
        assert!(near_duplicate_keys("  ").is_empty());
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

/// The text with NUL characters removed (they break C tools and terminals downstream and
/// carry nothing a person wrote).
pub fn without_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Characters that show nothing: zero-width spaces and joiners, direction marks and
/// overrides, word joiners and invisible operators, the byte-order mark, soft hyphen,
/// variation selectors, tags, and the blank "letters" that render as space (Braille
/// blank, Hangul fillers). Written inside a word they make a copy of a text look new to
/// a comparison; on their own they are content nobody can read.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// The text without [`is_invisible`] characters, for comparing texts (copied only when
/// it has some).
pub fn without_invisible(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(is_invisible) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !is_invisible(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether a person would see anything: a character that is not whitespace, a control
/// character or [`is_invisible`].
pub fn has_visible(text: &str) -> bool {
    text.chars()
        .any(|c| !c.is_whitespace() && !c.is_control() && !is_invisible(c))
}

#[cfg(test)]
mod visibility_tests {
    use super::*;

    #[test]
    fn invisible_text_has_nothing_visible_and_nuls_go() {
        for invisible in [
            "",
            "   ",
            "\0\0\0",
            "\u{200B}\u{200B}\u{200B}",
            "\u{FEFF}\u{2060}\t\n",
        ] {
            assert!(!has_visible(invisible), "{invisible:?}");
        }
        for blank in [
            "\u{2800}\u{2800}\u{2800}",
            "\u{3164}\u{3164}\u{3164}",
            "\u{202E}\u{202E}\u{202E}",
        ] {
            assert!(!has_visible(blank), "{blank:?}");
        }
        assert!(has_visible("\u{200B}a"));
        // Compared without what nobody sees: a zero-width space inside a word changes
        // neither its words nor its hash.
        let hidden = "deploy\u{200B}ments go out on tues\u{2060}days";
        let plain = "deployments go out on tuesdays";
        assert_eq!(
            words(hidden).collect::<Vec<_>>(),
            words(plain).collect::<Vec<_>>()
        );
        assert_eq!(content_hash(hidden), content_hash(plain));
        assert!(same_words(hidden, plain));
        assert!(has_visible("ğ"));
        assert_eq!(without_nul("dep\0loy"), "deploy");
    }
}
