//! One integration-test binary: every suite is a module here, so the tests
//! link once (linking swc and QuickJS eleven times cost minutes on a fresh
//! machine) and one `cargo test` runs them all.
mod common;

mod bad_input;
mod cache;
mod cli_trust;
mod codesign;
mod diff;
mod diff_budget;
mod docs;
mod fixtures;
mod flags_gates;
mod history;
mod history_git;
mod history_merge;
mod installs_report;
mod integrity;
mod isolation;
mod js_layer;
mod js_real;
mod nesting;
mod network;
mod pretty_pieces;
mod real_builds;
mod reports;
mod simulate;
mod site;
mod store_bounds;
mod store_trust;
mod stored_diff;
mod surface;
mod surface_platforms;
mod surface_text;
mod targets;
mod views;
mod workflows;
