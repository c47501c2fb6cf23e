//! The `circumflex` command line. Subcommands are added by the simulator module.

fn main() {
    eprintln!("circumflex {}: no subcommands yet", env!("CARGO_PKG_VERSION"));
    std::process::exit(2);
}
