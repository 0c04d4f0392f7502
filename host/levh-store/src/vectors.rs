//! Vector blobs (little-endian f32) and the exact top-k scan.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use levh_core::MemoryId;

pub(crate) fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector blob in `column` of a row (borrowed, not copied).
pub(crate) fn blob<'a>(
    row: &'a rusqlite::Row<'_>,
    column: usize,
) -> Result<&'a [u8], crate::SqliteStoreError> {
    Ok(row
        .get_ref(column)?
        .as_blob()
        .map_err(rusqlite::Error::from)?)
}

pub(crate) fn decode(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Dot product of a query with a stored blob, read in place (no allocation per row).
/// Vectors are stored L2-normalised, so this is the cosine.
pub(crate) fn dot(query: &[f32], blob: &[u8]) -> f32 {
    // Eight independent sums: one running sum is a chain of dependent adds that the
    // compiler may not reorder (float addition is not associative), so it runs at one add
    // per four cycles; eight lanes let it use vector registers.
    let mut lanes = [0f32; 8];
    let mut query_chunks = query.chunks_exact(8);
    let mut blob_chunks = blob.chunks_exact(32);
    for (q, b) in (&mut query_chunks).zip(&mut blob_chunks) {
        for lane in 0..8 {
            let at = lane * 4;
            lanes[lane] += q[lane] * f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        }
    }
    let rest: f32 = query_chunks
        .remainder()
        .iter()
        .zip(blob_chunks.remainder().chunks_exact(4))
        .map(|(q, b)| q * f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .sum();
    lanes.iter().sum::<f32>() + rest
}

struct Entry(f32, MemoryId);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed, so the heap's top is the worst kept entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// Keeps the `k` best scores seen.
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Whether `score` would enter the top k (lets the caller skip decoding the id).
    pub(crate) fn would_keep(&self, score: f32) -> bool {
        self.k > 0
            && (self.heap.len() < self.k || self.heap.peek().is_some_and(|worst| score > worst.0))
    }

    pub(crate) fn push(&mut self, score: f32, id: MemoryId) {
        self.heap.push(Entry(score, id));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    /// Best first.
    pub(crate) fn into_sorted(self) -> Vec<(MemoryId, f32)> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Entry(score, id)| (id, score))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.25f32, -1.5, 3.0];
        assert_eq!(decode(&encode(&v)), v);
        assert_eq!(dot(&[1.0, 1.0, 1.0], &encode(&v)), 1.75);
    }

    #[test]
    fn lane_sums_agree_with_a_plain_sum() {
        // 19 elements: two full chunks of eight and a remainder of three.
        let a: Vec<f32> = (0..19).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..19).map(|i| (i as f32 * 0.11).cos()).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &encode(&b)) - plain).abs() < 1e-5);
    }

    #[test]
    fn top_k_keeps_the_best_in_order() {
        let ids: Vec<MemoryId> = (0..5)
            .map(|i| {
                MemoryId::new_at(levh_core::Timestamp::from_second(1_700_000_000 + i).unwrap())
            })
            .collect();
        let mut top = TopK::new(3);
        for (i, score) in [0.1f32, 0.9, 0.5, 0.7, 0.2].into_iter().enumerate() {
            if top.would_keep(score) {
                top.push(score, ids[i]);
            }
        }
        let kept = top.into_sorted();
        assert_eq!(
            kept.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
            vec![0.9, 0.7, 0.5]
        );
        assert_eq!(kept[0].0, ids[1]);
    }
}
