use clap::Parser;

// swc allocates a node per token; mimalloc is markedly faster than the
// system allocator for that (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // `cc-teardown ls … | head` must end quietly, as Unix tools do, rather
    // than panic on a closed stdout.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = cc_teardown::cli::Cli::parse();
    let code = match cc_teardown::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the error and its causes, joined.
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            2
        }
    };
    std::process::exit(code);
}
