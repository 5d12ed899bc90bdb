"""The fast lane: ``scripts/test --fast`` runs the tests that need no service, without provisioning anything.

A test is ``fast`` unless it asks for a service, and that is read from the test itself, so a new test is sorted
correctly without anyone marking it: a marker that says it needs services (``integration``, ``browser``,
``serial_services``, ``django_db``) or a fixture, used directly or through another fixture or an autouse one, that
reaches the database, Redis, a server process or the browser. A test that reaches the database without saying so
fails loudly in either lane (pytest-django refuses database access without ``django_db``), and the fast lane
unsets ``DATABASE_URL`` and ``REDIS_URL``, so nothing in it can quietly reach the shared services.

``fast`` is set here only: a test marked ``fast`` by hand that also asks for a service stops the run at collection.

The lane has a budget (under a minute on the 2-core machine): the few service-free tests that take seconds of CPU
each (coverage simulations, every figure in three formats, the benchmark scripts run end to end) are marked
``slow`` instead, by ``SLOW_TESTS`` and ``SLOW_FIXTURES`` below, and run with everything else in ``scripts/test``.
Leaving a slow test off the list only makes the lane slower, never wrong.
``scripts/test --fast -m "fast or slow"`` runs every service-free test.
"""

from __future__ import annotations

import pytest

FAST = "fast"
SLOW = "slow"
SERVICE_MARKERS = frozenset({"integration", "browser", "serial_services", "django_db"})
SERVICE_FIXTURES = frozenset({
    # pytest-django's database (any backend: the fast lane must not fall back to SQLite for a database test);
    # not django_db_blocker, which every test gets through pytest-django's autouse fixtures
    "db", "transactional_db", "django_db_setup", "django_db_reset_sequences",
    "django_db_serialized_rollback", "live_server", "admin_client", "admin_user", "django_user_model",
    # this project's services and server processes (tests/conftest.py)
    "redis_url", "require_postgres", "service_env", "daphne_server", "celery_worker",
    # headless Chromium (tests/browser/conftest.py)
    "browser", "page", "static_server",
})


# Service-free tests that take a second of CPU or more (measured), by module; ALL for a whole module. A name
# covers every parametrisation of that test.
ALL = ("*",)
SLOW_TESTS: dict[str, tuple[str, ...]] = {
    "tests/analysis/reporting/test_figures.py": (
        "test_each_figure_calls_back_so_a_run_can_be_cancelled_between_figures",
        "test_every_analysis_gets_a_figure_in_three_formats",
        "test_the_same_results_draw_the_same_svg",
    ),
    "tests/analysis/test_fit_curve_command.py": (
        "test_a_threshold_at_75_percent_of_the_rise_is_widened_over_participants_too",
        "test_interval_method_is_chosen_and_reported",
        "test_trials_of_participants_who_differ_get_the_jackknife_widened_interval",
    ),
    "tests/analysis/stats/test_pairwise.py": (
        "test_a_unanimous_pair_gets_an_interval_that_narrows_with_more_answers",
    ),
    "tests/analysis/stats/test_clustered.py": (
        "test_participants_who_differ_widen_the_interval_beyond_the_models",
    ),
    "tests/analysis/stats/test_population.py": (
        "test_trial_rows_and_block_rows_give_the_same_fit",
        "test_few_participants_get_the_profile_interval_with_a_students_t_cut",
        "test_the_point_is_restricted_maximum_likelihoods_and_the_interval_the_plain_likelihoods",
        "test_answers_all_one_way_leave_the_population_quantile_unestimated",
        "test_quantile_differs_from_the_mean_of_individual_thresholds_when_people_differ",
        "test_a_failed_jackknife_refit_keeps_the_conditions_row_with_the_models_interval",
        "test_falling_curves_put_the_75_percent_point_below_the_median",
        "test_people_who_agree_still_get_an_interval_from_the_profile_likelihood",
        "test_per_condition_table_and_sentence",
        "test_recovers_the_75_percent_point_of_the_population",
        "test_reml_divides_the_spread_by_n_minus_1_where_maximum_likelihood_divides_by_n",
        "test_the_interval_follows_the_confidence_level_asked_for",
        "test_the_pooled_interval_per_condition_reaches_as_far_as_the_participant_jackknife",
    ),
    "tests/analysis/reporting/test_methods.py": (
        "test_the_methods_paragraph_states_design_n_exclusions_and_fitting",
    ),
    "tests/analysis/test_report_page.py": (
        "test_the_report_embeds_figures_tables_and_the_exclusion_report",
    ),
    "tests/playback/core/importers/test_sglang.py": (
        "test_detailed_run_becomes_streams_with_recorded_times",
        "test_zero_gaps_are_kept_as_recorded",
    ),
    # measured with --durations on the loaded machine (issue 42): seconds of CPU each
    "tests/analysis/test_speed_equivalence.py": ALL,  # whole simulated studies against the recorded numbers
    "tests/analysis/stats/test_ratings.py": (
        "test_quality_intervals_cover_the_truth_with_straight_liners_among_the_raters",
    ),
    "tests/analysis/stats/test_pipeline.py": (
        "test_individual_fits_above_the_runs_limit_say_why_there_is_no_mean",
        "test_the_axis_and_the_population_share_reach_every_fit_and_the_population_rows",
        "test_a_lapse_that_ends_at_its_bound_is_flagged_with_what_to_try",
        "test_preference_shares_follow_the_confidence_level_asked_for",
        "test_a_population_interval_never_runs_off_the_levels_the_model_integrates_over",
        "test_a_threshold_beyond_the_tested_levels_is_flagged_as_the_priors",
        "test_a_ttft_level_is_fitted_as_a_falling_curve",
        "test_psychometric_fits_get_one_row_per_level_and_participant_and_plot_one_point_per_level",
        "test_results_are_plain_json_without_nan",
        "test_the_jackknife_can_be_turned_off_and_is_not_used_below_five_participants",
    ),
    "tests/analysis/stats/test_psychometric.py": (
        "test_threshold_at_other_proportions_gets_its_own_interval",
        "test_binomial_data_keep_close_to_binomial_intervals",
        "test_hybrid_interval_is_shorter_than_the_profile_where_the_guess_rate_is_not_identified",
        "test_overdispersed_data_widen_the_interval",
        "test_2afc_threshold_intervals_cover_the_truth_about_95_percent_of_the_time",
        "test_agrees_with_psignifit_on_the_same_data",
        "test_falling_curve_mirrors_the_rising_one",
        "test_repeated_rows_move_eta_to_the_slab_for_overdispersed_data_and_keep_it_on_the_spike_for_binomial",
        "test_weibull_fits_on_log_levels_and_reports_threshold_in_levels",
        "test_yes_no_fit_recovers_threshold_and_width_from_exact_proportions",
        "test_threshold_at_75_percent_of_psi_in_2afc_is_the_core_midpoint",
        "test_a_threshold_at_a_proportion_is_computed_once_per_fit_and_point",
        "test_a_point_past_every_level_lies_in_its_interval_which_is_open_on_that_side",
        "test_a_low_proportion_with_a_free_guess_rate_is_open_below_but_bounded_above",
        "test_a_well_placed_design_has_a_closed_interval_and_no_warnings",
        "test_the_bartlett_correction_applies_only_where_the_guess_rate_is_fixed",
        "test_an_interval_the_answers_do_not_bound_is_open_on_that_side_not_the_grids_edge",
        "test_blocks_keep_repeated_levels_and_the_binomial_fit_is_the_pooled_one",
        "test_hybrid_interval_ends_where_the_guess_integrated_profile_drops_by_half_the_chi2_quantile",
    ),
    "tests/analysis/stats/test_score_arrays.py": (
        "test_fast_and_full_paths_agree",
        "test_a_file_the_fast_path_does_not_take_goes_through_the_importer_which_names_the_problem",
    ),
    # measured with --durations after the merge of this stop's branches: whole simulated analyses and grid fits
    "tests/analysis/stats/test_headline_run.py": ALL,  # the full pipeline against the reduced one
    "tests/analysis/stats/test_population_draws.py": ALL,  # a simulated study's likelihood draws in its fixture
    "tests/studyapp/design/test_counterbalance.py": (
        "test_constrained_shuffle_is_a_permutation_that_keeps_runs_short_whenever_possible",
    ),
    "tests/analysis/stats/test_bartlett.py": (
        "test_a_free_nuisance_rate_profiled_out_still_gives_about_one_with_many_trials",
    ),
    "tests/playback/core/importers/test_rederive.py": ("test_rederive_invariants",),  # a property-based search
    "tests/playback/core/test_arrivals.py": ("test_the_figure_draws_one_panel_per_pattern",),
    "tests/playback/test_commands.py": ("test_arrival_patterns_lists_every_pattern_and_plots_their_arrivals",),
    "tests/playback/core/test_tokenizers.py": (  # each loads a large vocabulary of its own
        "test_qwen_matches_the_packages_own_tokenizer",
        "test_deepseek_long_text_chunking_gives_the_same_ids",
    ),
    "tests/studyapp/design/adaptive/test_interleave.py": (
        "test_catch_trials_never_exceed_their_budget_so_max_trials_is_a_hard_cap",
    ),
    "tests/studyapp/bots/test_observers.py": (
        "test_ratings_stay_on_the_scale_and_rise_with_characters_per_second",
        "test_the_share_of_yes_answers_matches_the_model_probability",
    ),
    "tests/playback/core/test_playground.py": (
        "test_a_configuration_survives_the_url_exactly",
    ),
    # subprocesses: the benchmark scripts end to end, pytest itself, Django's deploy check, fresh interpreters
    "tests/benchmarks/test_benchmarks_run.py": ALL,
    "tests/scripts/test_fast_lane.py": ALL,
    "tests/pacelab/test_security_settings.py": (
        "test_check_deploy_is_clean_with_production_settings",
    ),
    "tests/pacelab/test_prepare.py": ALL,  # `manage.py prepare` in fresh interpreters, migrating fresh databases
    "tests/pacelab/test_import_contracts.py": (  # scripts/test --fast runs lint-imports itself
        "test_the_cores_load_without_django_settings",
        "test_a_forbidden_import_in_a_core_breaks_the_contract",
        "test_loading_celery_from_a_package_init_breaks_the_contract",
        "test_playback_importing_studyapp_breaks_the_contract",
        "test_each_core_alone_loads_no_framework_and_the_probe_would_see_one",
        "test_the_import_time_benchmark_prints_a_row_per_core_against_the_django_baseline",
    ),
}

# Module-scoped fixtures that run a whole simulated analysis (tens of seconds of CPU on a loaded machine), by
# module: every test that asks for one is slow, wherever it sits in the module (the first one pays for all).
SLOW_FIXTURES: dict[str, tuple[str, ...]] = {
    "tests/analysis/reporting/test_figures.py": ("results", "written"),
    "tests/analysis/reporting/test_methods.py": ("results",),
    "tests/analysis/test_report_page.py": ("results",),
    "tests/analysis/stats/test_pipeline.py": ("results",),
    "tests/analysis/stats/test_lognormal_population.py": ("results",),
    "tests/analysis/stats/test_scoring_calibration.py": ("calibration",),
}


def is_slow(item: pytest.Item) -> bool:
    if item.get_closest_marker(SLOW) is not None:
        return True
    module, _, name = item.nodeid.partition("::")
    names = SLOW_TESTS.get(module, ())
    if names == ALL or name.split("[")[0] in names:
        return True
    return bool(set(SLOW_FIXTURES.get(module, ())).intersection(getattr(item, "fixturenames", ())))


def services_of(item: pytest.Item) -> list[str]:
    """What ``item`` needs beyond the virtualenv: its service markers and service fixtures (empty: it is fast)."""
    marks = sorted(m.name for m in item.iter_markers() if m.name in SERVICE_MARKERS)
    fixtures = sorted(SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())))
    return marks + fixtures


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fast: needs no service (set automatically by tests/support/lanes.py; scripts/test --fast)")
    config.addinivalue_line(
        "markers", "slow: needs no service but seconds of CPU; not in scripts/test --fast (tests/support/lanes.py)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wrong = []
    for item in items:
        needs = services_of(item)
        if item.get_closest_marker(FAST) is not None and needs:
            wrong.append(f"{item.nodeid}: marked fast but needs {', '.join(needs)}")
        elif needs:
            continue
        elif is_slow(item):
            item.add_marker(SLOW)
        else:
            item.add_marker(FAST)
    if wrong:
        raise pytest.UsageError("tests marked fast by hand need services (leave the fast mark to "
                                "tests/support/lanes.py):\n  " + "\n  ".join(wrong))
