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
    // Parse errors happen before the options are known, so --json is read
    // from the raw arguments (up to a `--`): a script asking for JSON gets
    // JSON even when it misspelt an option.
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
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
    let json = cli.global.json;
    let code = match cc_teardown::cli::run(cli) {
        Ok(code) => code,
        Err(e) => cc_teardown::cli::report_error(&e, json),
    };
    std::process::exit(code);
}
