//! The store contract on SQLite: a store file in WAL mode in a temporary directory, as
//! `levh` opens it.

use levh_store::SqliteStore;
use levh_store_contract::{Contracted, Opened};

struct OnDisk {
    store: SqliteStore,
    _directory: tempfile::TempDir,
}

impl Opened for OnDisk {
    fn store(&self) -> &dyn Contracted {
        &self.store
    }
}

fn open() -> Option<OnDisk> {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&directory.path().join("levh.db")).unwrap();
    Some(OnDisk {
        store,
        _directory: directory,
    })
}

levh_store_contract::contract_tests!(open);
