//! `history scan`: fetch, analyse and record every release of a range.
//! Downloads run ahead of the analysis on their own threads; the analysis
//! of one build (the caller's: it opens the build and runs the pipeline)
//! runs on every core, one build at a time. Nothing here prints: how the
//! scan goes is told to a [`ScanProgress`].

use super::range::{explicit_versions, select_range};
use super::{HistoryError, ReleaseStatus};
use crate::source::{SourceError, npm};
use crate::store::FactsStore;
use serde::Serialize;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A release to scan: its version, platform and publication time.
#[derive(Debug, Clone)]
pub struct Job {
    pub version: String,
    pub platform: String,
    pub published: Option<String>,
}

/// What a scan made of one release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanStatus {
    /// Analysed now.
    Ok,
    /// Already in the store: not fetched again.
    Known,
    /// Its package holds no program.
    Empty,
    Failed,
}

impl ScanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ScanStatus::Ok => "ok",
            ScanStatus::Known => "known",
            ScanStatus::Empty => "empty",
            ScanStatus::Failed => "failed",
        }
    }
}

/// One release's outcome in a scan.
#[derive(Debug, Clone, Serialize)]
pub struct ScanResult {
    pub version: String,
    pub platform: String,
    pub status: ScanStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub seconds: f64,
}

/// A scan's outcome: release by release, then the counts.
#[derive(Debug, Clone, Serialize)]
pub struct Scanned {
    pub results: Vec<ScanResult>,
    pub analysed: usize,
    pub known: usize,
    /// Published packages without a program (placeholders).
    pub empty: usize,
    pub failed: usize,
    pub seconds: f64,
}

impl Scanned {
    fn of(results: Vec<ScanResult>, took: Duration) -> Scanned {
        let n = |s: ScanStatus| results.iter().filter(|r| r.status == s).count();
        Scanned {
            analysed: n(ScanStatus::Ok),
            known: n(ScanStatus::Known),
            empty: n(ScanStatus::Empty),
            failed: n(ScanStatus::Failed),
            seconds: took.as_secs_f64(),
            results,
        }
    }
}

/// What to scan, and how.
#[derive(Debug, Clone)]
pub struct ScanPlan<'a> {
    /// The versions: `A..B`, `A..`, `..B`, `..latest`, `all` or a list.
    pub range: &'a str,
    pub platforms: &'a [String],
    /// Keep the downloaded builds in the cache instead of deleting each
    /// once analysed.
    pub keep: bool,
    /// Downloads in flight at once.
    pub jobs: u16,
    /// Where downloads go.
    pub cache_dir: PathBuf,
}

/// How a scan tells how it goes (the command line draws a bar).
pub trait ScanProgress {
    /// The releases are known: `total`, of which `done` are already in the
    /// store.
    fn start(&self, total: u64, done: u64);
    /// What the scan does now.
    fn stage(&self, what: &str);
    /// One more release is done (analysed, empty or failed).
    fn release(&self, r: &ScanResult);
    /// The scan is over.
    fn finish(&self);
}

/// Analyse one downloaded release (a cache hit by now) and record it; the
/// error's message is recorded with a failed release.
pub type Analyse<'a> = dyn Fn(&Job) -> anyhow::Result<()> + 'a;

/// A marker the scan leaves in a cache entry it downloaded itself, so the
/// entry is deleted after analysis even when a killed scan left it behind
/// and the next scan finds it as a cache hit.
const SCAN_MARKER: &str = ".downloaded-by-history-scan";

/// Why a release was not downloaded.
struct FetchFailure {
    /// The package holds no program (a placeholder release).
    no_program: bool,
    message: String,
}

/// A release downloaded (or why not), and how long that took.
struct Fetched {
    job: Job,
    build: Result<npm::CachedBuild, FetchFailure>,
    took: Duration,
}

impl FactsStore {
    /// Fetch, analyse (with `analyse`) and record every release `plan`
    /// names that the store does not hold yet; then store the `changes`
    /// answer of every pair of consecutive releases and remake the search
    /// index. A release that fails is recorded as failed (and retried by
    /// the next scan); the scan goes on.
    pub fn scan(
        &self,
        plan: &ScanPlan,
        analyse: &Analyse,
        progress: &dyn ScanProgress,
    ) -> Result<Scanned, HistoryError> {
        let started = Instant::now();
        let mut results = Vec::new();
        let mut todo = VecDeque::new();
        for j in self.releases_to_scan(plan.range, plan.platforms)? {
            if self.release_done(&j.version, &j.platform)? {
                results.push(ScanResult {
                    version: j.version,
                    platform: j.platform,
                    status: ScanStatus::Known,
                    error: None,
                    seconds: 0.0,
                });
            } else {
                todo.push_back(j);
            }
        }
        progress.start((results.len() + todo.len()) as u64, results.len() as u64);
        let (fetched, workers) = downloads(todo, plan.jobs, &plan.cache_dir);
        for f in fetched {
            let r = self.scan_one(f, plan.keep, analyse, progress)?;
            progress.release(&r);
            results.push(r);
        }
        for w in workers {
            let _ = w.join();
        }
        // Every pair of consecutive releases gets its `changes` answer now,
        // so the query reads a few kilobytes instead of comparing two
        // builds' facts (a one-time ~0.1 s a pair; a pair already answered
        // is skipped).
        for p in plan.platforms {
            progress.stage(&format!("{p}: changes between consecutive releases"));
            let ok = self.analysed_releases(p)?;
            for w in ok.windows(2) {
                let _ = self.changes_between(&w[0], &w[1], p);
            }
        }
        // The search index is remade now, when the scan changed what it is
        // made from (0.7 s on every darwin-arm64 release), not by the first
        // search after the scan; a failure here is the search's to report.
        progress.stage("search index");
        let _ = self.ensure_search_index();
        progress.finish();
        Ok(Scanned::of(results, started.elapsed()))
    }

    /// The releases `range` names on each platform, with their publication
    /// times. A list of versions the store already holds needs no
    /// registry: a rescan of known builds is then a few lookups, offline
    /// too.
    fn releases_to_scan(
        &self,
        range: &str,
        platforms: &[String],
    ) -> Result<Vec<Job>, HistoryError> {
        let mut jobs = Vec::new();
        for p in platforms {
            if let Some(listed) = explicit_versions(range)
                && listed
                    .iter()
                    .map(|v| self.release_done(v, p))
                    .collect::<Result<Vec<bool>, _>>()?
                    .into_iter()
                    .all(|done| done)
            {
                jobs.extend(listed.into_iter().map(|v| Job {
                    version: v,
                    platform: p.clone(),
                    published: None,
                }));
                continue;
            }
            let published = npm::published_versions(p)?;
            let names: Vec<String> = published.iter().map(|x| x.version.clone()).collect();
            let chosen = select_range(range, &names).map_err(|why| HistoryError::Range {
                range: range.to_string(),
                why: Box::new(why),
            })?;
            for v in chosen {
                let time = published
                    .iter()
                    .find(|x| x.version == v)
                    .and_then(|x| x.time.clone());
                jobs.push(Job {
                    version: v,
                    platform: p.clone(),
                    published: time,
                });
            }
        }
        Ok(jobs)
    }

    /// Analyse and record one downloaded release, or record why it could
    /// not be; its download is deleted unless kept.
    fn scan_one(
        &self,
        f: Fetched,
        keep: bool,
        analyse: &Analyse,
        progress: &dyn ScanProgress,
    ) -> Result<ScanResult, HistoryError> {
        let Fetched { job, build, took } = f;
        progress.stage(&format!("{} {}: analysing", job.version, job.platform));
        let t = Instant::now();
        let outcome = match build {
            Err(e) if e.no_program => Err((ReleaseStatus::Empty, e.message)),
            Err(e) => Err((ReleaseStatus::Failed, e.message)),
            Ok(b) => {
                let r = analyse(&job);
                let dir = b.program.parent().map(PathBuf::from);
                if !keep
                    && let Some(dir) = dir
                    && (!b.cache_hit || dir.join(SCAN_MARKER).exists())
                {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                r.map_err(|e| (ReleaseStatus::Failed, format!("{e:#}")))
            }
        };
        let seconds = (took + t.elapsed()).as_secs_f64();
        let (status, error) = match outcome {
            Ok(()) => (ScanStatus::Ok, None),
            // A package with nothing to analyse is a fact about the
            // release, not a failure: recorded once, never retried.
            Err((status, msg)) => {
                self.record_unanalysed(
                    &job.version,
                    &job.platform,
                    job.published.as_deref(),
                    status,
                    &msg,
                )?;
                let status = match status {
                    ReleaseStatus::Empty => ScanStatus::Empty,
                    _ => ScanStatus::Failed,
                };
                (status, Some(msg))
            }
        };
        Ok(ScanResult {
            version: job.version,
            platform: job.platform,
            status,
            error,
            seconds,
        })
    }
}

/// Download `todo` on `jobs` threads, in order. The channel holds at most
/// one finished download, so at most jobs + 2 builds are on disk at once
/// (in flight, waiting, being analysed).
fn downloads(
    todo: VecDeque<Job>,
    jobs: u16,
    cache_dir: &Path,
) -> (mpsc::Receiver<Fetched>, Vec<JoinHandle<()>>) {
    let queue = Arc::new(Mutex::new(todo));
    let (tx, rx) = mpsc::sync_channel::<Fetched>(1);
    let mut workers = Vec::new();
    for _ in 0..jobs {
        let (queue, tx, cache_dir) = (queue.clone(), tx.clone(), cache_dir.to_path_buf());
        workers.push(std::thread::spawn(move || {
            loop {
                let Some(job) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                    return;
                };
                let t = Instant::now();
                let build = fetch(&job, &cache_dir);
                if tx
                    .send(Fetched {
                        job,
                        build,
                        took: t.elapsed(),
                    })
                    .is_err()
                {
                    return;
                }
            }
        }));
    }
    (rx, workers)
}

/// Download one release into the cache, marking an entry this scan made.
fn fetch(job: &Job, cache_dir: &Path) -> Result<npm::CachedBuild, FetchFailure> {
    npm::fetch(
        &job.version,
        &job.platform,
        &npm::FetchOptions {
            cache_dir: cache_dir.to_path_buf(),
            progress: Arc::new(npm::Silent),
        },
    )
    .inspect(|b| {
        if !b.cache_hit
            && let Some(dir) = b.program.parent()
        {
            let _ = std::fs::write(dir.join(SCAN_MARKER), b"");
        }
    })
    .map_err(|e| FetchFailure {
        no_program: matches!(e, SourceError::NoProgram),
        message: e.to_string(),
    })
}
