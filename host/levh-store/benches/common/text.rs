//! Synthetic note text shared by the store benches: a 5,000-word vocabulary with a long
//! tail, so full-text queries see realistic posting lists (the commonest word turns up in
//! about a quarter of the memories, as the commonest content words do in real notes once
//! stopwords are gone), and deterministic 12–24-word sentences from it.

/// The vocabulary.
pub fn vocabulary() -> Vec<String> {
    let stems = [
        "deploy", "database", "service", "cluster", "invoice", "meeting", "review", "release",
        "budget", "customer", "schema", "latency", "queue", "token", "backup", "incident",
        "roadmap", "design", "contract", "vendor", "metric", "alert", "sprint", "ticket",
    ];
    let mut words = Vec::new();
    for i in 0..5000 {
        words.push(format!("{}{}", stems[i % stems.len()], i / stems.len()));
    }
    words
}

/// A deterministic pseudo-random sentence of 12–24 words.
pub fn sentence(words: &[String], seed: u64) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let length = 12 + (next() % 13) as usize;
    // r² skews draws towards the head of the vocabulary
    (0..length)
        .map(|_| {
            let r = (next() % 1_000_000) as f64 / 1_000_000.0;
            words[((r * r) * words.len() as f64) as usize].as_str()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
