use clap::Parser;

fn main() {
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
