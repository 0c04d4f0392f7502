//! What the index's tests share: clustered vectors like sentence embeddings, and a
//! store on a real WAL file with a cache folder for snapshots.

use std::path::PathBuf;
use std::sync::Arc;

use levh_core::{Actor, MemoryFilter, MemoryId, Store, Timestamp, Workspace};

use crate::SqliteStore;
use crate::ann::{AnnConfig, AnnIndex};

pub(super) const MODEL: &str = "test-model";

/// Clustered unit vectors like sentence embeddings (topics with sub-topics); uniform
/// random ones would make any HNSW look broken, and no embedder produces them.
pub(super) struct Corpus {
    pub(super) state: u64,
    pub(super) dimension: usize,
    pub(super) centres: Vec<Vec<f32>>,
}

impl Corpus {
    pub(super) fn new(seed: u64, dimension: usize, topics: usize) -> Self {
        let mut corpus = Self {
            state: seed | 1,
            dimension,
            centres: Vec::new(),
        };
        for _ in 0..topics {
            let topic = corpus.around(None, 1.0);
            for _ in 0..8 {
                let sub = corpus.around(Some(&topic), 0.045 * (384.0 / dimension as f32).sqrt());
                corpus.centres.push(sub);
            }
        }
        corpus
    }

    pub(super) fn uniform(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(super) fn gaussian(&mut self) -> f32 {
        let u = self.uniform().max(1e-12);
        let v = self.uniform();
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }

    pub(super) fn around(&mut self, centre: Option<&[f32]>, noise: f32) -> Vec<f32> {
        let mut v: Vec<f32> = (0..self.dimension)
            .map(|i| centre.map_or(0.0, |c| c[i]) + noise * self.gaussian())
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }

    /// A stored text's vector.
    pub(super) fn draw(&mut self) -> Vec<f32> {
        let at = (self.uniform() * self.centres.len() as f64) as usize;
        let centre = self.centres[at].clone();
        self.around(
            Some(&centre),
            0.035 * (384.0 / self.dimension as f32).sqrt(),
        )
    }
}

pub(super) struct Fixture {
    pub(super) _dir: tempfile::TempDir,
    pub(super) cache: PathBuf,
    pub(super) store: Arc<SqliteStore>,
    pub(super) written: u64,
}

impl Fixture {
    /// A real WAL file, as in production (a separate read connection builds).
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).unwrap());
        Self {
            cache: dir.path().join("cache").join("index"),
            _dir: dir,
            store,
            written: 0,
        }
    }

    pub(super) fn index(&self, config: AnnConfig) -> AnnIndex {
        AnnIndex::new(self.store.clone(), Some(self.cache.clone()), config)
    }

    pub(super) fn add(&mut self, vector: Vec<f32>, workspace: &str, project: &str) -> MemoryId {
        self.written += 1;
        let at = Timestamp::from_second(1_700_000_000 + self.written as i64).unwrap();
        let content = format!("memory {}", self.written);
        let record =
            crate::test_records::record(content, at, workspace, project, Some((MODEL, vector)));
        let id = record.memory.id;
        self.store
            .insert(&record, &[], &|_| None, &Actor::cli())
            .unwrap();
        id
    }

    pub(super) fn fill(&mut self, corpus: &mut Corpus, count: usize) -> Vec<(MemoryId, Vec<f32>)> {
        (0..count)
            .map(|n| {
                let vector = corpus.draw();
                let project = format!("p{}", n % 4);
                (self.add(vector.clone(), "default", &project), vector)
            })
            .collect()
    }
}

pub(super) fn everywhere() -> MemoryFilter {
    MemoryFilter::workspace(Workspace::default())
}

pub(super) fn ids(found: &[(MemoryId, f32)]) -> Vec<MemoryId> {
    found.iter().map(|(id, _)| *id).collect()
}

/// Small graphs in debug builds: behaviour, not speed, is under test here.
pub(super) fn small() -> AnnConfig {
    AnnConfig {
        exact_below: 100,
        rebuild_tail: 1_000,
        connectivity: 16,
        ef_construction: 32,
        ef_search: 64,
        scan_among_at_most: 1_000,
    }
}
