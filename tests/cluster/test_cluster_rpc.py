"""The store's RPC tests, run again on a real 3-master Redis Cluster (see conftest.py).

The functions are the single-Redis tests themselves, imported so that pytest collects them
here with the cluster fixtures; left out are the Fit tests that inspect one Redis directly
(MONITOR, SCAN on a single node), which have no meaning on a cluster.
"""

from __future__ import annotations

from ..test_expiry import (
    test_a_lone_entrys_expiry_reaches_watchers_on_time_with_its_version,
    test_each_expiry_is_reported_once_however_many_replicas_run,
)
from ..test_fit_rpc import (
    test_async_embedding_is_eventually_consistent,
    test_explain_lists_factor_values_and_reasons,
    test_filters_and_min_score,
    test_fit_picks_the_relevant_entry_within_budget,
    test_fit_sees_puts_deletes_and_expiry_at_once,
    test_identical_content_is_embedded_once,
    test_include_content_returns_the_text_of_the_chosen_form,
    test_recent_strategy_is_newest_first,
    test_reembed_reports_progress,
    test_relevant_strategy_keeps_relevant_turns,
)
from ..test_namespaces_rpc import (
    test_cleared_deleted_and_expired_namespaces_are_not_listed,
    test_namespaces_with_live_entries_are_listed_in_byte_order_with_totals,
    test_pages_follow_the_byte_order_without_repeats,
)
from ..test_store_rpc import (
    test_clear_removes_only_that_namespace,
    test_compare_and_set_loses_no_update_under_concurrent_writers,
    test_conditional_delete_checks_the_version,
    test_delete_removes_and_reports,
    test_event_time_defaults_to_the_write_time,
    test_expired_entry_is_invisible_to_every_rpc,
    test_get_of_an_absent_key_is_not_found,
    test_get_returns_compressed_form_unless_full_is_set,
    test_if_version_zero_creates_only,
    test_keys_pages_through_a_prefix_in_byte_order,
    test_keys_skips_expired_members_across_pages,
    test_namespaces_are_isolated,
    test_overwrite_keeps_created_bumps_version_and_resets_ttl,
    test_put_many_with_one_version_conflict_writes_nothing,
    test_put_many_writes_all_and_get_many_reports_missing,
    test_put_then_get_returns_content_and_all_metadata,
    test_server_default_ttl_applies_when_put_gives_none,
    test_stats_totals_and_savings,
    test_unicode_keys_and_content_round_trip,
    test_version_mismatch_returns_current_version,
    test_without_a_compressed_form_get_returns_the_original,
)
from ..test_touch import (
    test_a_touched_entry_outlives_its_first_ttl_on_every_replica,
    test_keys_without_a_ttl_are_left_alone_and_absent_or_expired_ones_are_missing,
    test_watchers_see_the_touch_with_the_entrys_version,
)
from ..test_watch_and_replicas import (
    test_a_replica_behind_a_trimmed_log_reloads,
    test_fit_on_one_server_process_sees_a_put_acknowledged_by_another,
    test_watch_from_a_trimmed_position_is_a_clear_error,
    test_watch_resumes_after_a_token_missing_nothing,
    test_watch_streams_puts_deletes_and_clears,
)

__all__ = [
    "test_a_lone_entrys_expiry_reaches_watchers_on_time_with_its_version",
    "test_each_expiry_is_reported_once_however_many_replicas_run",
    "test_cleared_deleted_and_expired_namespaces_are_not_listed",
    "test_namespaces_with_live_entries_are_listed_in_byte_order_with_totals",
    "test_pages_follow_the_byte_order_without_repeats",
    "test_a_replica_behind_a_trimmed_log_reloads",
    "test_async_embedding_is_eventually_consistent",
    "test_clear_removes_only_that_namespace",
    "test_compare_and_set_loses_no_update_under_concurrent_writers",
    "test_conditional_delete_checks_the_version",
    "test_delete_removes_and_reports",
    "test_event_time_defaults_to_the_write_time",
    "test_expired_entry_is_invisible_to_every_rpc",
    "test_explain_lists_factor_values_and_reasons",
    "test_filters_and_min_score",
    "test_fit_on_one_server_process_sees_a_put_acknowledged_by_another",
    "test_fit_picks_the_relevant_entry_within_budget",
    "test_fit_sees_puts_deletes_and_expiry_at_once",
    "test_get_of_an_absent_key_is_not_found",
    "test_get_returns_compressed_form_unless_full_is_set",
    "test_identical_content_is_embedded_once",
    "test_if_version_zero_creates_only",
    "test_include_content_returns_the_text_of_the_chosen_form",
    "test_keys_pages_through_a_prefix_in_byte_order",
    "test_keys_skips_expired_members_across_pages",
    "test_namespaces_are_isolated",
    "test_overwrite_keeps_created_bumps_version_and_resets_ttl",
    "test_put_many_with_one_version_conflict_writes_nothing",
    "test_put_many_writes_all_and_get_many_reports_missing",
    "test_put_then_get_returns_content_and_all_metadata",
    "test_recent_strategy_is_newest_first",
    "test_reembed_reports_progress",
    "test_relevant_strategy_keeps_relevant_turns",
    "test_server_default_ttl_applies_when_put_gives_none",
    "test_stats_totals_and_savings",
    "test_unicode_keys_and_content_round_trip",
    "test_version_mismatch_returns_current_version",
    "test_watch_from_a_trimmed_position_is_a_clear_error",
    "test_watch_resumes_after_a_token_missing_nothing",
    "test_watch_streams_puts_deletes_and_clears",
    "test_without_a_compressed_form_get_returns_the_original",
    "test_a_touched_entry_outlives_its_first_ttl_on_every_replica",
    "test_keys_without_a_ttl_are_left_alone_and_absent_or_expired_ones_are_missing",
    "test_watchers_see_the_touch_with_the_entrys_version",
]
