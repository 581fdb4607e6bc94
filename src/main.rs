use clap::Parser;

// swc allocates a node per token; mimalloc is markedly faster than the
// system allocator for that (docs/internals/performance-journal.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_t` of the
/// pinned libmimalloc-sys; `tests/cli_trust.rs` proves the place by
/// setting the option through its environment variable).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;

/// Keep freed memory instead of handing it back to the kernel while a
/// build is parsed (from its analyses on it is purged again). A cold
/// analysis builds and frees thousands of ASTs; memory purged after
/// mimalloc's default second came back zeroed by the kernel on the next
/// touch, and that zeroing was a large share of a cold run's system time
/// (docs/internals/performance-journal.md). A command lives for seconds, and its peak stays
/// what it was: the freed memory is reused, not added to. A user's
/// `MIMALLOC_PURGE_DELAY` still wins.
///
/// Not in a process that analyses build after build (`history scan`): there
/// what one build's analysis freed stayed, fragmented, under the next
/// one's, and the peak grew with the builds scanned (1.38 GB over 193
/// releases; 0.96 GB over 3 against 0.71–0.79 GB with mimalloc's purging,
/// which costs about a tenth more time). Such a process purges after
/// 10 ms from its start: with mimalloc's own delay the peak still grew
/// (2.1.330–2.1.332: 1.17 GB, against 1.04 GB at 10 ms and 1.06 GB for
/// 2.1.332 alone).
fn keep_freed_memory(many_builds: bool, debug: cc_teardown::cli::Debug) {
    let asked = std::env::var_os("MIMALLOC_PURGE_DELAY").is_some();
    if many_builds && !asked {
        purge_freed_memory();
    }
    if !many_builds && !asked {
        // SAFETY: sets one integer option of the allocator; mimalloc reads
        // its options atomically and allows changing them at any time.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
        // Until the analyses start: what they free (the surface's tracer
        // alone holds about 100 MB at its end) is freed on threads whose
        // memory the last allocations do not reuse, and kept it put the
        // cold peak of 2.1.332 over 1 GB (1.06 GB against 1.03 GB purged,
        // docs/internals/performance.md "Reaches found once").
        cc_teardown::analysis::on_analyses_start(purge_freed_memory);
    }
    if debug.alloc {
        // SAFETY: reads one integer option.
        let delay = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
        eprintln!("debug: allocator purge delay {delay}");
    }
}

/// Hand freed memory back to the kernel again, 10 ms after it is freed
/// (mimalloc's own default is a second: measured, 10 ms kept the peak
/// lowest, 1.03 GB against 1.04 GB at half a second).
fn purge_freed_memory() {
    // SAFETY: as in `keep_freed_memory`.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 10) };
}

unsafe extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
    fn mi_option_get(option: libc::c_int) -> libc::c_long;
}

/// What a SIGBUS prints, made before any file is mapped: the line on
/// stderr, and with `--json` the error object on stdout too.
#[cfg(unix)]
static BUS_ERROR: std::sync::OnceLock<(Vec<u8>, Option<Vec<u8>>)> = std::sync::OnceLock::new();

/// Builds are read through memory maps. When another
/// program truncates such a file while it is mapped (an updater rewriting
/// the installed executable in place, say), the next read of a page past
/// its new end raises SIGBUS, which killed the process ("Bus error").
/// Nothing can be read there any more, so the run ends as any unreadable
/// input does: one line, exit 2.
#[cfg(unix)]
extern "C" fn on_sigbus(_: libc::c_int) {
    // Several threads may read the lost pages at once (`hash` on both
    // cores printed the line twice): the first to arrive says it and ends
    // the process; any other waits here for that end. A lock-free swap is
    // async-signal-safe, and so is pause(2).
    static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if ENDING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        loop {
            // SAFETY: only suspends this thread until the process ends.
            unsafe { libc::pause() };
        }
    }
    if let Some((line, json)) = BUS_ERROR.get() {
        // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffers
        // were made before the handler was installed and are never freed.
        unsafe {
            if let Some(j) = json {
                libc::write(1, j.as_ptr().cast(), j.len());
            }
            libc::write(2, line.as_ptr().cast(), line.len());
        }
    }
    // SAFETY: ends the process at once, as the signal would have.
    unsafe { libc::_exit(2) }
}

#[cfg(unix)]
fn end_cleanly_on_sigbus(json: bool) {
    let message = "a build being read was truncated or became unreadable while mapped in \
        memory: did another program change it meanwhile?";
    let json = json.then(|| {
        let v = serde_json::json!({"error": {"kind": "source", "message": message}});
        format!("{v}\n").into_bytes()
    });
    let _ = BUS_ERROR.set((format!("error: {message}\n").into_bytes(), json));
    // SAFETY: installs a handler that only calls async-signal-safe
    // functions, before any thread starts or any file is mapped.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

fn main() {
    // `cc-teardown ls … | head` must end quietly, as Unix tools do, rather
    // than panic on a closed stdout.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Parse errors happen before the options are known, so --json is read
    // from the raw arguments (up to a `--`): a script asking for JSON gets
    // JSON even when it misspelt an option.
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    #[cfg(unix)]
    end_cleanly_on_sigbus(json);
    let cli = match cc_teardown::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        // No command at all: the help, as clap shows it (exit 2).
        Err(e)
            if !json
                && e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            e.exit()
        }
        Err(e) => {
            let e = cc_teardown::cli::usage_error(&e);
            std::process::exit(cc_teardown::cli::report_error(&e, json))
        }
    };
    let debug = cc_teardown::cli::Debug::from_env();
    keep_freed_memory(cli.analyses_many_builds(), debug);
    let json = cli.global.json;
    let code = match cc_teardown::cli::run(cli, debug) {
        Ok(code) => code,
        Err(e) => cc_teardown::cli::report_error(&e, json),
    };
    std::process::exit(code);
}
