//! The saved snapshot file, `<cache>/<model>-<dimension>.hnsw`: its layout, the atomic
//! write (temp file + rename), and the checks a loaded file must pass before it is
//! trusted (header, checksum, change number, sampled vectors).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};
use usearch::Index;

use super::build::Job;
use super::graph::{Snapshot, graph_error, graph_options, quantize};
use crate::{SqliteStoreError, vectors};

/// `<model>-<dimension>.hnsw`, the model name reduced to characters safe in a file name
/// (the header keeps the real name, so two models that reduce alike never mix).
pub(super) fn file_name(model: &str, dimension: usize) -> String {
    let safe: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}-{dimension}.hnsw")
}

/// Bumped whenever the file layout or the graph library changes.
pub(super) const FORMAT_VERSION: u32 = 3;

pub(super) const MAGIC: &[u8; 8] = b"LEVHHNSW";

/// Vectors compared with the database when a file is loaded.
pub(super) const SAMPLES: usize = 32;

impl Job {
    /// Writes the snapshot atomically. A failure only costs a rebuild at the next start.
    pub(super) fn save(&self, snapshot: &Snapshot) {
        let Some(path) = &self.path else { return };
        if let Err(error) = self.write_file(path, snapshot) {
            tracing::warn!(%error, path = %path.display(), "could not save the vector index");
        }
    }

    /// The header, then the payload: the graph's keys (little-endian i64s) and the graph
    /// as usearch serializes it. The header carries the payload's SHA-256.
    pub(super) fn write_file(&self, path: &Path, snapshot: &Snapshot) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let temp = dir.join(format!(
            ".{}.{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("index"),
            std::process::id()
        ));
        let result = (|| {
            let keys: Vec<u8> = snapshot.seqs.iter().flat_map(|s| s.to_le_bytes()).collect();
            // Saved right after a build or load, before anything is absorbed: the keys,
            // the change number and the graph describe the same vectors.
            let graph = {
                let index = snapshot.graph();
                let mut bytes = vec![0u8; index.serialized_length()];
                index
                    .save_to_buffer(&mut bytes)
                    .map_err(std::io::Error::other)?;
                bytes
            };
            let digest: [u8; 32] = Sha256::new()
                .chain_update(&keys)
                .chain_update(&graph)
                .finalize()
                .into();
            let mut header = Vec::new();
            header.extend_from_slice(MAGIC);
            header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            header.extend_from_slice(&(self.model.len() as u32).to_le_bytes());
            header.extend_from_slice(self.model.as_bytes());
            header.extend_from_slice(&(self.dimension as u32).to_le_bytes());
            header.extend_from_slice(&snapshot.covered().to_le_bytes());
            header.extend_from_slice(&(snapshot.seqs.len() as u64).to_le_bytes());
            header.extend_from_slice(&digest);
            let mut file = File::create(&temp)?;
            file.write_all(&header)?;
            file.write_all(&keys)?;
            file.write_all(&graph)?;
            file.sync_all()?;
            std::fs::rename(&temp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// The persisted snapshot if it covers more than `current` and passes every check.
    pub(super) fn load_newer_than(
        &self,
        current: i64,
    ) -> Result<Option<Snapshot>, SqliteStoreError> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let Ok(mut file) = File::open(path) else {
            return Ok(None);
        };
        let header = match read_header(&mut file) {
            Ok(header) => header,
            Err(reason) => return Ok(self.reject(path, &reason)),
        };
        if header.model != self.model || header.dimension != self.dimension {
            return Ok(self.reject(path, "written for another model"));
        }
        if header.covered <= current {
            return Ok(None);
        }
        let last = self.with_connection(|conn| self.last_change(conn))?;
        if header.covered > last {
            return Ok(self.reject(path, "covers changes this database never had"));
        }
        let mut payload = Vec::new();
        if let Err(error) = file.read_to_end(&mut payload) {
            return Ok(self.reject(path, &format!("payload: {error}")));
        }
        // A flipped bit in the graph could load fine and send a search astray: the
        // digest over the payload catches it first.
        let digest: [u8; 32] = Sha256::digest(&payload).into();
        if digest != header.digest {
            return Ok(self.reject(path, "checksum mismatch"));
        }
        let Some((keys, graph_bytes)) = header
            .count
            .checked_mul(8)
            .and_then(|length| payload.split_at_checked(length))
        else {
            return Ok(self.reject(path, "shorter than its keys"));
        };
        let seqs: Vec<i64> = keys
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let graph = Index::new(&graph_options(self.dimension, &self.config))
            .map_err(|e| graph_error("creating", e))?;
        if let Err(error) = graph.load_from_buffer(graph_bytes) {
            return Ok(self.reject(path, &format!("graph: {error}")));
        }
        if graph.size() != header.count || graph.dimensions() != self.dimension {
            return Ok(self.reject(path, "counts or dimensions disagree with the header"));
        }
        let step = (seqs.len() / SAMPLES).max(1);
        let sample: Vec<i64> = seqs.iter().step_by(step).copied().collect();
        let matching = self.with_connection(|conn| {
            let mut statement = conn.prepare(
                "SELECT vector FROM memory_embeddings
                     WHERE memory_seq = ?1 AND model = ?2 AND dimension = ?3",
            )?;
            let mut matching = 0;
            let mut point = vec![0i8; self.dimension];
            for seq in &sample {
                let stored: Option<Vec<u8>> = statement
                    .query_row(params![seq, self.model, self.dimension as i64], |row| {
                        row.get(0)
                    })
                    .optional()?;
                let in_graph = graph.get(*seq as u64, &mut point).is_ok_and(|n| n == 1);
                if in_graph && stored.is_some_and(|blob| quantize(&vectors::decode(&blob)) == point)
                {
                    matching += 1;
                }
            }
            Ok(matching)
        })?;
        // Purges and re-embeds since the build explain a few misses; a file from another
        // database misses nearly all.
        if matching * 2 < sample.len() {
            return Ok(self.reject(path, "its vectors are not this database's"));
        }
        Snapshot::new(header.covered, seqs, graph).map(Some)
    }

    pub(super) fn reject(&self, path: &Path, reason: &str) -> Option<Snapshot> {
        self.counters.rejected_files.fetch_add(1, Ordering::Relaxed);
        tracing::info!(path = %path.display(), reason, "ignoring the saved vector index; rebuilding");
        None
    }
}

pub(super) struct Header {
    pub(super) model: String,
    pub(super) dimension: usize,
    pub(super) covered: i64,
    pub(super) count: usize,
    pub(super) digest: [u8; 32],
}

pub(super) fn read_header(reader: &mut impl Read) -> Result<Header, String> {
    pub(super) fn bytes<const N: usize>(reader: &mut impl Read) -> Result<[u8; N], String> {
        let mut buffer = [0u8; N];
        reader
            .read_exact(&mut buffer)
            .map_err(|e| format!("header: {e}"))?;
        Ok(buffer)
    }
    if &bytes::<8>(reader)? != MAGIC {
        return Err("not a levh vector index".into());
    }
    if u32::from_le_bytes(bytes(reader)?) != FORMAT_VERSION {
        return Err("written by another levh version".into());
    }
    let length = u32::from_le_bytes(bytes(reader)?) as usize;
    if length > 1024 {
        return Err("model name too long".into());
    }
    let mut model = vec![0u8; length];
    reader
        .read_exact(&mut model)
        .map_err(|e| format!("header: {e}"))?;
    let model = String::from_utf8(model).map_err(|_| "model name is not UTF-8".to_owned())?;
    Ok(Header {
        model,
        dimension: u32::from_le_bytes(bytes(reader)?) as usize,
        covered: i64::from_le_bytes(bytes(reader)?),
        count: u64::from_le_bytes(bytes(reader)?) as usize,
        digest: bytes(reader)?,
    })
}

#[cfg(test)]
mod tests {
    use levh_core::VectorIndex;

    use crate::ann::test_support::*;

    #[test]
    fn a_saved_snapshot_is_loaded_on_restart_and_a_corrupt_one_is_rebuilt() {
        let mut fixture = Fixture::new();
        let mut corpus = Corpus::new(17, 48, 10);
        fixture.fill(&mut corpus, 300);
        let first = fixture.index(small());
        first.refresh(MODEL, 48).unwrap();
        let path = first.snapshot_path(MODEL, 48).unwrap();
        assert!(path.exists());
        assert_eq!(first.stats().builds, 1);
        let query = corpus.draw();
        let before = first.nearest(&everywhere(), MODEL, &query, 10).unwrap();

        // A restart: the file is loaded, nothing is built, answers are the same.
        let second = fixture.index(small());
        second.refresh(MODEL, 48).unwrap();
        assert_eq!((second.stats().loads, second.stats().builds), (1, 0));
        assert_eq!(
            second.nearest(&everywhere(), MODEL, &query, 10).unwrap(),
            before
        );
        assert_eq!(second.stats().approximate_queries, 1);

        // One flipped byte deep in the graph: the checksum rejects it and it is rebuilt.
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let third = fixture.index(small());
        third.refresh(MODEL, 48).unwrap();
        let stats = third.stats();
        assert_eq!((stats.rejected_files, stats.loads, stats.builds), (1, 0, 1));
        assert_eq!(
            third.nearest(&everywhere(), MODEL, &query, 10).unwrap(),
            before
        );
        // The rebuilt snapshot replaced the corrupt file.
        let fourth = fixture.index(small());
        fourth.refresh(MODEL, 48).unwrap();
        assert_eq!((fourth.stats().loads, fourth.stats().builds), (1, 0));

        // A truncated file is no better.
        std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
        let fifth = fixture.index(small());
        fifth.refresh(MODEL, 48).unwrap();
        assert_eq!((fifth.stats().rejected_files, fifth.stats().builds), (1, 1));
    }

    #[test]
    fn a_snapshot_from_another_database_is_not_trusted() {
        let mut ours = Fixture::new();
        let mut theirs = Fixture::new();
        ours.fill(&mut Corpus::new(1, 48, 10), 300);
        // More changes than ours, so only the sampled vectors can tell the files apart.
        theirs.fill(&mut Corpus::new(2, 48, 10), 250);
        let foreign = theirs.index(small());
        foreign.refresh(MODEL, 48).unwrap();
        std::fs::create_dir_all(&ours.cache).unwrap();
        std::fs::copy(
            foreign.snapshot_path(MODEL, 48).unwrap(),
            ours.index(small()).snapshot_path(MODEL, 48).unwrap(),
        )
        .unwrap();

        let index = ours.index(small());
        index.refresh(MODEL, 48).unwrap();
        let stats = index.stats();
        assert_eq!((stats.rejected_files, stats.loads, stats.builds), (1, 0, 1));
    }
}
