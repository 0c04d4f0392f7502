//! The store contract: what every levh store must do, as plain functions that take a store
//! and assert what a user would notice — values read back, counts, orders, who wins a
//! decision taken by two at once. The same functions run against each backend:
//! `tests/sqlite.rs` on a SQLite file in WAL mode, `tests/postgres.rs` on a real
//! PostgreSQL with pgvector ([`contract_tests!`] writes one `#[test]` per function).
//!
//! A function here names only levh-core's traits: it cannot lean on either backend's
//! internals, so a difference between the two is a failure of one of them.

mod entities;
mod fixtures;
mod held;
mod keyed;
mod lifecycle;
mod memories;
mod places;
mod reads;
mod search;
mod server;
mod sync;

pub use entities::*;
pub use fixtures::{Opened, at, record};
pub use held::*;
pub use keyed::*;
pub use lifecycle::*;
pub use memories::*;
pub use places::*;
pub use reads::*;
pub use search::*;
pub use server::*;
pub use sync::*;

use levh_core::{ServerStore, Store, VectorIndex};

/// What the contract is checked on: a store with its vector index and server side.
pub trait Contracted: Store + VectorIndex + ServerStore {}

impl<T: Store + VectorIndex + ServerStore> Contracted for T {}

/// One `#[test]` per contract function, each on a store from `$open()` (a function
/// returning `Option<impl Opened>`; `None` skips the test, as when no server is there).
#[macro_export]
macro_rules! contract_tests {
    ($open:path) => {
        $crate::contract_tests!(@each $open;
            a_memory_reads_back_as_it_was_stored,
            reads_see_only_their_workspace_and_live_memories,
            memories_by_id_skip_missing_ones_and_include_forgotten_ones,
            lists_are_ordered_paged_and_continue_after_a_cursor,
            filters_select_by_labels_validity_and_record_time,
            new_states_are_written_logged_and_returned,
            interference_weakens_live_neighbours_only,
            content_fields_and_validity_are_replaced_in_place,
            a_batch_writes_memories_held_candidates_and_its_sync_page_together,
            of_writers_storing_one_text_at_once_exactly_one_writes,
            stale_vectors_are_listed_and_replaced_only_over_their_content,
            full_text_finds_words_and_prefixes_best_first_within_the_filter,
            nearest_vectors_come_best_first_within_the_filter_and_model,
            near_duplicates_are_found_by_shared_keys_most_shared_first,
            a_key_has_one_current_memory_and_a_stale_replacement_loses,
            of_writers_racing_for_a_new_key_exactly_one_wins,
            a_person_can_adopt_a_stored_memory_as_a_key_current_one,
            held_candidates_are_listed_found_by_hash_and_expire_as_a_status,
            a_held_decision_is_taken_once,
            of_two_people_admitting_at_once_one_stores_the_memory,
            a_held_update_replaces_its_target_once,
            the_event_log_grows_in_order_and_tells_each_memory_history,
            tokens_verify_until_revoked_within_their_workspace,
            sessions_start_end_once_and_count_their_memories,
            health_counts_what_is_stored,
            reports_count_the_workspace_events_and_say_when_the_bound_cut_them,
            presence_is_upserted_ended_listed_and_dropped_when_unheard_for_a_week,
            working_memory_stays_in_its_session_until_promoted,
            a_consolidation_retires_its_members_and_undoes_exactly,
            review_decisions_schedule_and_hide_until_due,
            standings_count_live_memories_by_labels,
            a_purge_leaves_no_copy_in_any_table,
            items_gone_from_their_source_are_retired_and_pinned_ones_kept,
            sync_runs_are_recorded_read_back_and_listed_newest_first,
            texts_outside_contents_are_listed_and_rewritten_in_place,
            people_and_organizations_are_resolved_counted_and_related,
            merged_entities_keep_every_key_and_memory,
            commitments_and_conflicts_are_recorded_once_and_resolved_once,
            attachments_link_a_file_to_live_memories_until_purged
        );
    };
    (@each $open:path; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let Some(opened) = $open() else { return };
                $crate::$name($crate::Opened::store(&opened));
            }
        )*
    };
}
