//! The report's simulations: every workflow with a level table run once
//! per level, each bounded, so a hostile build's script cannot hold the
//! report.

use super::{LevelRun, WorkflowRuns};
use crate::analysis::simulate::{self, Limits, Options, Scenario};
use crate::analysis::workflows::WorkflowScript;

/// Limits of one simulated run in a report: a bundled script at one level
/// runs in milliseconds (2.1.220's code-review: 4–6 ms, 13–20 agents), so
/// these are far above need and keep a hostile build's script from holding
/// the report for long.
const SIM_LIMITS: Limits = Limits {
    timeout: std::time::Duration::from_secs(2),
    memory_bytes: 64 << 20,
    max_agents: 1000,
};

/// Simulate every workflow that has a level table once per level (args: the
/// level's name, seed 0, generated results). The runs happen on one worker
/// thread and each is awaited for its deadline and a grace: the engine
/// polls its deadline only every few thousand operations, so a long native
/// call could outlast it; a run that has not ended by then is reported as
/// stopped and the rest as not run, and the report goes on (the worker is
/// left to end with the process).
pub fn simulate_levels(wfs: &[WorkflowScript]) -> Vec<WorkflowRuns> {
    use std::sync::mpsc;
    let mut out: Vec<WorkflowRuns> = Vec::new();
    let mut jobs = Vec::new();
    for w in wfs {
        let Some(levels) = &w.levels else { continue };
        let mut runs = Vec::new();
        for l in levels {
            if let Some(text) = &w.text {
                jobs.push((
                    out.len(),
                    runs.len(),
                    w.name.clone(),
                    l.level.clone(),
                    text.clone(),
                    w.phases.iter().map(|p| p.title.clone()).collect::<Vec<_>>(),
                ));
            }
            runs.push(LevelRun::failed(
                &l.level,
                "not run: the script was not reconstructed".into(),
            ));
        }
        out.push(WorkflowRuns {
            workflow: w.name.clone(),
            runs,
        });
    }
    if jobs.is_empty() {
        return out;
    }
    let keys: Vec<(usize, usize)> = jobs.iter().map(|j| (j.0, j.1)).collect();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("report-simulate".into())
        .stack_size(8 << 20)
        .spawn(move || {
            for (_, _, name, level, text, declared) in jobs {
                let run = match crate::js::depth::check_source(&name, &text) {
                    Err(e) => LevelRun::failed(&level, format!("not run: {e}")),
                    Ok(()) => {
                        let options = Options {
                            args: Some(serde_json::Value::String(level.clone())),
                            seed: Some(0),
                            limits: SIM_LIMITS,
                            declared_phases: declared,
                            keep_prompts: false,
                        };
                        match simulate::simulate(&text, Scenario::default(), &options) {
                            Ok(t) => LevelRun::from_trace(&level, &t),
                            Err(e) => LevelRun::failed(&level, format!("not run: {e}")),
                        }
                    }
                };
                if tx.send(run).is_err() {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        for (w, r) in keys {
            let level = out[w].runs[r].level.clone();
            out[w].runs[r] = LevelRun::failed(&level, format!("not run: {e}"));
        }
        return out;
    }
    let wait = SIM_LIMITS.timeout + SIM_LIMITS.timeout / 2 + std::time::Duration::from_secs(1);
    let mut stuck = false;
    for (w, r) in keys {
        let level = out[w].runs[r].level.clone();
        out[w].runs[r] = if stuck {
            LevelRun::failed(&level, "not run: an earlier run did not end".into())
        } else {
            match rx.recv_timeout(wait) {
                Ok(run) => run,
                Err(_) => {
                    stuck = true;
                    LevelRun::failed(
                        &level,
                        format!("stopped: still running after {} ms", wait.as_millis()),
                    )
                }
            }
        };
    }
    out
}
