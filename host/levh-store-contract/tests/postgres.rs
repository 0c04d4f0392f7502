//! The store contract on PostgreSQL with pgvector: a database of its own per test on the
//! server this test binary starts (`levh_postgres::testing`). Skipped, saying why, where no
//! PostgreSQL is available — a failure instead under `LEVH_REQUIRE_TEST_ASSETS=1`.

use levh_postgres::testing::TestStore;
use levh_store_contract::{Contracted, Opened};

struct OnServer(TestStore);

impl Opened for OnServer {
    fn store(&self) -> &dyn Contracted {
        &*self.0
    }
}

fn open() -> Option<OnServer> {
    levh_postgres::testing::store().map(OnServer)
}

levh_store_contract::contract_tests!(open);
