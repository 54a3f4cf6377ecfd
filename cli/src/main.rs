//! The `defergc` command: stress and benchmark drivers with human and JSON
//! reports. `defergc` with no arguments runs `defergc stress` (a million
//! defers capturing GC objects, verified).

mod cli;

fn main() {
    std::process::exit(cli::run());
}
