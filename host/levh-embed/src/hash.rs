//! A deterministic, offline, non-semantic embedder: signed feature hashing of words, word
//! bigrams and character trigrams into a fixed-size vector.
//!
//! It knows nothing of meaning ("car" and "automobile" are unrelated to it) but it does
//! see shared words and shared word pieces ("deploy" / "deployment"), which makes it a
//! useful fuzzy-lexical signal next to BM25 until a real model is installed. It must stay
//! byte-for-byte stable across releases: stored vectors are compared with new ones, so any
//! change to the features needs a new model id.

use levh_core::{EmbedError, Embedder, text};
use xxhash_rust::xxh3::xxh3_64;

const WORD_WEIGHT: f32 = 1.0;
const BIGRAM_WEIGHT: f32 = 0.5;
const TRIGRAM_WEIGHT: f32 = 0.25;

/// The hash embedder.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dimension: usize,
    model_id: String,
}

impl HashEmbedder {
    /// The dimension used by default: small enough to scan fast, large enough that
    /// collisions between a sentence's features are rare.
    pub const DEFAULT_DIMENSION: usize = 256;

    /// A hash embedder of the given dimension (model id `hash-v1-<dimension>`).
    pub fn new(dimension: usize) -> Self {
        let dimension = dimension.max(8);
        Self {
            dimension,
            model_id: format!("hash-v1-{dimension}"),
        }
    }

    fn add(&self, vector: &mut [f32], feature: &str, weight: f32) {
        let h = xxh3_64(feature.as_bytes());
        let slot = (h % self.dimension as u64) as usize;
        // The top bit picks a sign, so collisions cancel on average instead of piling up.
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        vector[slot] += sign * weight;
    }

    fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0f32; self.dimension];
        let words: Vec<String> = text::words(text)
            .filter(|w| !text::is_stopword(w))
            .collect();
        for word in &words {
            self.add(&mut vector, &format!("w:{word}"), WORD_WEIGHT);
            let padded: Vec<char> = format!("<{word}>").chars().collect();
            for gram in padded.windows(3) {
                self.add(
                    &mut vector,
                    &format!("c:{}", gram.iter().collect::<String>()),
                    TRIGRAM_WEIGHT,
                );
            }
        }
        for pair in words.windows(2) {
            self.add(
                &mut vector,
                &format!("b:{} {}", pair[0], pair[1]),
                BIGRAM_WEIGHT,
            );
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            vector.iter_mut().for_each(|x| *x /= norm);
        }
        vector
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new(Self::DEFAULT_DIMENSION)
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn dimension(&self) -> usize {
        self.dimension
    }
    fn is_semantic(&self) -> bool {
        false
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_text(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn embed(text: &str) -> Vec<f32> {
        HashEmbedder::default().embed(&[text]).unwrap().remove(0)
    }

    #[test]
    fn vectors_are_unit_length_and_deterministic() {
        let v = embed("The deploy pipeline runs on Fridays");
        assert_eq!(v.len(), 256);
        assert!((cos(&v, &v) - 1.0).abs() < 1e-5);
        assert_eq!(v, embed("The deploy pipeline runs on Fridays"));
    }

    #[test]
    fn this_exact_vector_is_frozen() {
        // Stored vectors are compared with new ones: a change here needs a new model id.
        let v = embed("levh remembers");
        let checksum: f64 = v
            .iter()
            .enumerate()
            .map(|(i, x)| (i as f64 + 1.0) * f64::from(*x))
            .sum();
        assert!(
            (checksum - FROZEN_CHECKSUM).abs() < 1e-4,
            "checksum {checksum}"
        );
    }
    const FROZEN_CHECKSUM: f64 = -48.857_145_041_227_34;

    #[test]
    fn shared_words_and_word_pieces_count_and_stopwords_do_not() {
        let base = embed("deploy the service to production");
        let related = embed("deployment of the service in production");
        let unrelated = embed("the cat is on the mat");
        assert!(cos(&base, &related) > 0.5, "{}", cos(&base, &related));
        assert!(cos(&base, &unrelated) < 0.2, "{}", cos(&base, &unrelated));
    }

    #[test]
    fn empty_text_gives_a_zero_vector_not_nan() {
        assert!(embed("").iter().all(|x| *x == 0.0));
    }
}
